#!/usr/bin/env python3
"""Tabulates `make schema-agreement`: the gate, kubeconform and kubectl-validate
against the API server's verdict, object by object.

    schema-agreement.py SET_DIR KUBECONFORM_JSON KUBECTL_VALIDATE_JSON

SET_DIR is what TestAgreementWithAPIServer wrote (GATE_AGREEMENT_DIR):
verdicts.tsv (the API server's and the gate's verdicts) and objects/NNNN.yaml.
The tool outputs are their JSON reports on SET_DIR/objects (an empty file
name means the tool could not run at all: every object is "no verdict").

A tool's verdict per object: accept, reject, or "no verdict" when it could not
judge the object offline (kubeconform: statusError, e.g. no schema for the
kind; kubectl-validate: an internal error, e.g. no OpenAPI for the group
version; either: the object missing from its report). No verdict is split
into "no schema" (the tool has none for the apiVersion/kind offline) and
"tool error" (it failed on the object without validating it, e.g. a decode
error; the exit code is 1, like a rejection, but no validation ran). Writes the table to
stdout and every disagreement to SET_DIR/disagreements.tsv.
"""
import collections
import csv
import json
import os
import re
import sys


def mutation(origin):
    """The class of an object by its origin: the mutation, or 'corpus'."""
    m = re.match(r"mutant (.+?) of ", origin)
    if m:
        return "mutant: " + m.group(1)
    if origin.startswith("hand-written "):
        return "hand-written: " + origin[len("hand-written "):]
    return "corpus object"


def short(msg, n=110):
    msg = re.sub(r"^problem validating schema\. Check JSON formatting: jsonschema validation failed with 'file://\S+ - ", "", msg)
    msg = re.sub(r"^Internal error occurred: ", "", msg)
    msg = re.sub(r"file://\S+", "", msg)
    msg = re.sub(r"/\S*/objects/\d+\.yaml", "", msg)
    msg = " ".join(msg.split())
    return msg if len(msg) <= n else msg[:n] + "…"


def kubeconform(path):
    out = {}
    if not path:
        return out
    with open(path) as f:
        for r in json.load(f).get("resources", []):
            name = os.path.basename(r.get("filename", ""))
            st = r.get("status", "")
            if st == "statusValid":
                v = ("accept", "")
            elif st == "statusInvalid":
                v = ("reject", r.get("msg", ""))
            elif st in ("statusSkipped", "statusEmpty"):
                v = ("accept", st)  # exit 0: the object passes
            elif "could not find schema" in r.get("msg", ""):
                v = ("noschema", r.get("msg", st))
            else:
                v = ("error", r.get("msg", st))
            if name in out:  # several documents in one file: the worst wins
                order = {"reject": 3, "error": 2, "noschema": 1, "accept": 0}
                if order[v[0]] <= order[out[name][0]]:
                    continue
            out[name] = v
    return out


def kubectl_validate(path):
    out = {}
    if not path:
        return out
    with open(path) as f:
        for name, statuses in json.load(f).items():
            v = ("accept", "")
            for s in statuses:
                if s.get("status") == "Success":
                    continue
                if "failed to retrieve validator" in s.get("message", ""):
                    v = ("noschema", s.get("message", ""))
                elif s.get("code") == 500 or s.get("reason") == "InternalError":
                    v = ("error", s.get("message", ""))
                else:
                    v = ("reject", s.get("message", ""))
                    break
            out[os.path.basename(name)] = v
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    setdir, kc_json, kv_json = sys.argv[1:]
    with open(os.path.join(setdir, "verdicts.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        sys.exit("schema-agreement: verdicts.tsv holds no objects")
    tools = {
        "kubectl-gate": {os.path.basename(r["file"]): (r["gate"], "") for r in rows},
        "kubeconform -strict": kubeconform(kc_json),
        "kubectl-validate": kubectl_validate(kv_json),
    }
    srv = collections.Counter(r["server"] for r in rows)
    print(f"objects: {len(rows)} (API server: {srv['accept']} accept, {srv['reject']} reject)")
    print()
    print("| tool | agree | disagree: tool accepts, server rejects | disagree: tool rejects, server accepts | no verdict: no schema | no verdict: tool error |")
    print("|---|---|---|---|---|---|")
    detail = []
    classes = {}
    notes = []
    keys = {"accept": "accepts", "reject": "rejects", "noschema": "no schema", "error": "tool error"}

    def root_only(msg):
        """kubeconform's only error: apiVersion, kind, metadata at the root
        (a CRD schema that does not list them, converted strictly)."""
        segs = re.split(r"- at '", msg)[1:]
        return len(segs) == 1 and segs[0].startswith("': additional properties") and \
            set(re.findall(r"'(\w+)'", segs[0])) == {"apiVersion", "kind", "metadata"}
    for tool, got in tools.items():
        c = collections.Counter()
        cl = collections.defaultdict(collections.Counter)  # (key, class) → kinds
        rooted = collections.Counter()
        for r in rows:
            name = os.path.basename(r["file"])
            v, msg = got.get(name, ("error", "not in the tool's report"))
            s = r["server"]
            if v == "reject" and root_only(msg):
                rooted[s] += 1
            if v == s:
                c["agree"] += 1
                continue
            key = keys[v]
            if v == "accept":
                why = mutation(r["origin"])
                if why == "corpus object":
                    why += ": " + short(re.sub(r'"[^"]*"', '"…"', r["server_message"]), 90)
            elif v == "reject":
                why = short(msg)
            elif v == "noschema":
                why = f"{mutation(r['origin'])} (server: {s})"
            else:
                why = f"{short(msg, 70)} (server: {s}; {mutation(r['origin'])})"
            c[key] += 1
            cl[(key, why)][r["object"].split(" ")[1].split("/")[0]] += 1
            detail.append((tool, key, r["index"], r["origin"], r["object"], s, v, short(msg, 300), short(r["server_message"], 300)))
        classes[tool] = cl
        n = len(rows)
        print(f"| {tool} | {c['agree']} ({100 * c['agree'] / n:.1f} %) | {c['accepts']} | {c['rejects']} | {c['no schema']} | {c['tool error']} |")
        if rooted:
            notes.append(f"{tool} rejected {sum(rooted.values())} object(s) only for apiVersion, kind, metadata at the root (a CRD "
                         f"whose schema does not list them, converted strictly): {rooted['reject']} agree with the server by that "
                         f"alone, {rooted['accept']} disagree")
    for tool, cl in classes.items():
        if not cl:
            continue
        print()
        print(f"{tool}: where it differs from the API server (count, class, kinds)")
        order = {"accepts": 0, "rejects": 1, "no schema": 2, "tool error": 3}
        for (key, why), kinds in sorted(cl.items(), key=lambda x: (order[x[0][0]], -sum(x[1].values()), x[0][1])):
            top = ", ".join(f"{k} {m}" for k, m in kinds.most_common(4)) + (", …" if len(kinds) > 4 else "")
            print(f"  {sum(kinds.values()):5d}  {key}: {why}  [{top}]")
    for note in notes:
        print()
        print("note: " + note)
    with open(os.path.join(setdir, "disagreements.tsv"), "w") as f:
        f.write("tool\tclass\tindex\torigin\tobject\tserver\ttool_verdict\ttool_message\tserver_message\n")
        for d in detail:
            f.write("\t".join(str(x).replace("\t", " ") for x in d) + "\n")


if __name__ == "__main__":
    main()
