package apivalidation

// prepare does to the object what the API server's generic create does
// before the kind's validation (rest.FillObjectMetaSystemFields and
// rest.BeforeCreate): the object gets a uid (here a fixed one), the status
// of a new object is dropped (every strategy's PrepareForCreate resets it),
// and a name is generated from metadata.generateName when there is none
// (names.SimpleNameGenerator: the prefix cut to 58 characters and 5 random
// ones, here a fixed valid suffix).
func prepare(obj map[string]any) {
	delete(obj, "status")
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		return
	}
	md["uid"] = "6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f"
	name, _ := md["name"].(string)
	gen, _ := md["generateName"].(string)
	if name == "" && gen != "" {
		if len(gen) > maxGeneratedNameLength {
			gen = gen[:maxGeneratedNameLength]
		}
		md["name"] = gen + "x7k2q"
	}
}

// maxGeneratedNameLength is the prefix length names.SimpleNameGenerator keeps.
const maxGeneratedNameLength = 63 - 5
