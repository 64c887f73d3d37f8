package apivalidation

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	autoscalingvalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"
	"k8s.io/kubernetes/pkg/apis/batch"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	"k8s.io/kubernetes/pkg/apis/coordination"
	coordinationvalidation "k8s.io/kubernetes/pkg/apis/coordination/validation"
	core "k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/discovery"
	discoveryvalidation "k8s.io/kubernetes/pkg/apis/discovery/validation"
	"k8s.io/kubernetes/pkg/apis/flowcontrol"
	flowcontrolvalidation "k8s.io/kubernetes/pkg/apis/flowcontrol/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
	"k8s.io/kubernetes/pkg/apis/node"
	nodevalidation "k8s.io/kubernetes/pkg/apis/node/validation"
	"k8s.io/kubernetes/pkg/apis/policy"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"
	"k8s.io/kubernetes/pkg/apis/rbac"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	schedulingvalidation "k8s.io/kubernetes/pkg/apis/scheduling/validation"
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"
	"k8s.io/kubernetes/pkg/features"
	volumevalidation "k8s.io/kubernetes/pkg/volume/validation"
)

// validators holds, per kind, what its registry strategy's Validate runs
// on create (k8s.io/kubernetes/pkg/registry/<group>/<kind>/strategy.go),
// with the options it computes for a new object (no old object).
// Webhook configurations are added by package webhooks (Register): their
// validation package links the API server's admission library and a
// Kubernetes client, which the rules must not import. Admission policies
// are left out: ValidatingAdmissionPolicies are compiled by the policy
// checks.
var validators = map[schema.GroupKind]func(runtime.Object) field.ErrorList{
	{Group: "", Kind: "Pod"}: func(o runtime.Object) field.ErrorList {
		p := o.(*core.Pod)
		opts := pod.GetValidationOptionsFromPodSpecAndMeta(&p.Spec, nil, &p.ObjectMeta, nil)
		opts.ResourceIsPod = true
		return corevalidation.ValidatePodCreate(p, opts)
	},
	{Group: "", Kind: "PodTemplate"}: func(o runtime.Object) field.ErrorList {
		t := o.(*core.PodTemplate)
		return corevalidation.ValidatePodTemplate(t, pod.GetValidationOptionsFromPodTemplate(&t.Template, nil))
	},
	{Group: "", Kind: "ReplicationController"}: func(o runtime.Object) field.ErrorList {
		rc := o.(*core.ReplicationController)
		return corevalidation.ValidateReplicationController(rc, pod.GetValidationOptionsFromPodTemplate(rc.Spec.Template, nil))
	},
	{Group: "", Kind: "Service"}: func(o runtime.Object) field.ErrorList {
		svc := o.(*core.Service)
		// The Service storage's BeginCreate (normalizeClusterIPs) fills
		// the plural from the singular an older client sets alone.
		if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 {
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
		return corevalidation.ValidateServiceCreate(svc)
	},
	{Group: "", Kind: "ConfigMap"}: func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateConfigMap(o.(*core.ConfigMap))
	},
	{Group: "", Kind: "Secret"}: func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateSecret(o.(*core.Secret))
	},
	{Group: "", Kind: "ServiceAccount"}: func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateServiceAccount(o.(*core.ServiceAccount))
	},
	{Group: "", Kind: "Namespace"}: func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateNamespace(o.(*core.Namespace))
	},
	{Group: "", Kind: "LimitRange"}: func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateLimitRange(o.(*core.LimitRange))
	},
	{Group: "", Kind: "ResourceQuota"}: func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateResourceQuota(o.(*core.ResourceQuota))
	},
	{Group: "", Kind: "Endpoints"}: func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateEndpointsCreate(o.(*core.Endpoints))
	},
	{Group: "", Kind: "PersistentVolumeClaim"}: func(o runtime.Object) field.ErrorList {
		pvc := o.(*core.PersistentVolumeClaim)
		return corevalidation.ValidatePersistentVolumeClaim(pvc, corevalidation.ValidationOptionsForPersistentVolumeClaim(pvc, nil))
	},
	{Group: "", Kind: "PersistentVolume"}: func(o runtime.Object) field.ErrorList {
		pv := o.(*core.PersistentVolume)
		errs := corevalidation.ValidatePersistentVolume(pv, corevalidation.ValidationOptionsForPersistentVolume(pv, nil))
		return append(errs, volumevalidation.ValidatePersistentVolume(pv)...)
	},
	{Group: "apps", Kind: "Deployment"}: func(o runtime.Object) field.ErrorList {
		d := o.(*apps.Deployment)
		return appsvalidation.ValidateDeployment(d, pod.GetValidationOptionsFromPodTemplate(&d.Spec.Template, nil))
	},
	{Group: "apps", Kind: "ReplicaSet"}: func(o runtime.Object) field.ErrorList {
		rs := o.(*apps.ReplicaSet)
		return appsvalidation.ValidateReplicaSet(rs, pod.GetValidationOptionsFromPodTemplate(&rs.Spec.Template, nil))
	},
	{Group: "apps", Kind: "DaemonSet"}: func(o runtime.Object) field.ErrorList {
		ds := o.(*apps.DaemonSet)
		return appsvalidation.ValidateDaemonSet(ds, pod.GetValidationOptionsFromPodTemplate(&ds.Spec.Template, nil))
	},
	{Group: "apps", Kind: "StatefulSet"}: func(o runtime.Object) field.ErrorList {
		ss := o.(*apps.StatefulSet)
		setOpts := appsvalidation.StatefulSetValidationOptions{
			AllowStatefulSetRecreateStrategy: utilfeature.DefaultFeatureGate.Enabled(features.StatefulSetRecreateStrategy),
		}
		return appsvalidation.ValidateStatefulSet(ss, setOpts, pod.GetValidationOptionsFromPodTemplate(&ss.Spec.Template, nil))
	},
	{Group: "apps", Kind: "ControllerRevision"}: func(o runtime.Object) field.ErrorList {
		return appsvalidation.ValidateControllerRevisionCreate(o.(*apps.ControllerRevision))
	},
	{Group: "batch", Kind: "Job"}: func(o runtime.Object) field.ErrorList {
		j := o.(*batch.Job)
		if j.Spec.ManualSelector == nil || !*j.Spec.ManualSelector {
			selectJobPods(j)
		}
		return batchvalidation.ValidateJobCreate(j, batchvalidation.JobValidationOptions{
			PodValidationOptions:  pod.GetValidationOptionsFromPodTemplate(&j.Spec.Template, nil),
			RequirePrefixedLabels: true,
		})
	},
	{Group: "batch", Kind: "CronJob"}: func(o runtime.Object) field.ErrorList {
		cj := o.(*batch.CronJob)
		return batchvalidation.ValidateCronJobCreate(cj, pod.GetValidationOptionsFromPodTemplate(&cj.Spec.JobTemplate.Spec.Template, nil))
	},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: func(o runtime.Object) field.ErrorList {
		hpa := o.(*autoscaling.HorizontalPodAutoscaler)
		return autoscalingvalidation.ValidateHorizontalPodAutoscaler(hpa, hpaOptions(hpa))
	},
	{Group: "networking.k8s.io", Kind: "Ingress"}: func(o runtime.Object) field.ErrorList {
		return networkingvalidation.ValidateIngressCreate(o.(*networking.Ingress))
	},
	{Group: "networking.k8s.io", Kind: "IngressClass"}: func(o runtime.Object) field.ErrorList {
		return networkingvalidation.ValidateIngressClass(o.(*networking.IngressClass))
	},
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: func(o runtime.Object) field.ErrorList {
		np := o.(*networking.NetworkPolicy)
		return networkingvalidation.ValidateNetworkPolicy(np, networkingvalidation.ValidationOptionsForNetworking(np, nil))
	},
	{Group: "policy", Kind: "PodDisruptionBudget"}: func(o runtime.Object) field.ErrorList {
		return policyvalidation.ValidatePodDisruptionBudget(o.(*policy.PodDisruptionBudget), policyvalidation.PodDisruptionBudgetValidationOptions{})
	},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: func(o runtime.Object) field.ErrorList {
		return rbacvalidation.ValidateRole(o.(*rbac.Role))
	},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: func(o runtime.Object) field.ErrorList {
		return rbacvalidation.ValidateClusterRole(o.(*rbac.ClusterRole), rbacvalidation.ClusterRoleValidationOptions{})
	},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: func(o runtime.Object) field.ErrorList {
		return rbacvalidation.ValidateRoleBinding(o.(*rbac.RoleBinding))
	},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: func(o runtime.Object) field.ErrorList {
		return rbacvalidation.ValidateClusterRoleBinding(o.(*rbac.ClusterRoleBinding))
	},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: func(o runtime.Object) field.ErrorList {
		return schedulingvalidation.ValidatePriorityClass(o.(*scheduling.PriorityClass))
	},
	{Group: "storage.k8s.io", Kind: "StorageClass"}: func(o runtime.Object) field.ErrorList {
		return storagevalidation.ValidateStorageClass(o.(*storage.StorageClass))
	},
	{Group: "storage.k8s.io", Kind: "CSIDriver"}: func(o runtime.Object) field.ErrorList {
		return storagevalidation.ValidateCSIDriver(o.(*storage.CSIDriver))
	},
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}: func(o runtime.Object) field.ErrorList {
		return storagevalidation.ValidateVolumeAttributesClass(o.(*storage.VolumeAttributesClass))
	},
	{Group: "node.k8s.io", Kind: "RuntimeClass"}: func(o runtime.Object) field.ErrorList {
		return nodevalidation.ValidateRuntimeClass(o.(*node.RuntimeClass))
	},
	{Group: "coordination.k8s.io", Kind: "Lease"}: func(o runtime.Object) field.ErrorList {
		return coordinationvalidation.ValidateLease(o.(*coordination.Lease))
	},
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: func(o runtime.Object) field.ErrorList {
		return discoveryvalidation.ValidateEndpointSliceCreate(o.(*discovery.EndpointSlice))
	},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}: func(o runtime.Object) field.ErrorList {
		return flowcontrolvalidation.ValidateFlowSchema(o.(*flowcontrol.FlowSchema))
	},
}

// hpaOptions are the options the HorizontalPodAutoscaler strategy computes
// for a new object (validationOptionsForHorizontalPodAutoscaler).
func hpaOptions(hpa *autoscaling.HorizontalPodAutoscaler) autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions {
	opts := autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions{
		MinReplicasLowerBound: 1,
		ScaleTargetRefValidationOptions: autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{
			RequiredCoveredByDeclarative: true,
		},
		ObjectMetricsValidationOptions: autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{AllowEmptyAPIGroup: true},
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.HPAScaleToZero) {
		opts.MinReplicasLowerBound = 0
	}
	if hpa.Spec.ScaleTargetRef.Kind == "ReplicationController" {
		opts.ScaleTargetRefValidationOptions.AllowEmptyAPIGroup = true
	}
	return opts
}

// selectJobPods does what the Job strategy's PrepareForCreate does for a Job
// without manualSelector: it labels the pod template with the Job's name
// and uid (unless the template sets those labels itself, which validation
// then judges) and selects the pods by the uid label.
func selectJobPods(j *batch.Job) {
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	set := func(key, value string) {
		if _, ok := j.Spec.Template.Labels[key]; !ok {
			j.Spec.Template.Labels[key] = value
		}
	}
	set(batch.LegacyJobNameLabel, j.Name)
	set(batch.JobNameLabel, j.Name)
	set(batch.LegacyControllerUidLabel, string(j.UID))
	set(batch.ControllerUidLabel, string(j.UID))
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batch.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batch.ControllerUidLabel] = string(j.UID)
	}
}

// Register adds the create validation of one kind, for a package that
// cannot be imported here (webhooks). It is called from init functions
// only, before any Validate.
func Register(group, kind string, validate func(runtime.Object) field.ErrorList) {
	validators[schema.GroupKind{Group: group, Kind: kind}] = validate
}
