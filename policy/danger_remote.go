package policy

import "strings"

// remoteDangers flags commands that destroy what lives on other machines
// and cannot be undone from here: a repository (glab repo delete; gh's is
// in danger_git.go), infrastructure (terraform/tofu destroy, apply
// -destroy), a Kubernetes namespace or every resource of a kind, a bucket
// with its objects, a cloud project or resource group, an app.
func (z *analyzer) remoteDangers(name string, args []word) {
	ops := leadingOperands(args, 8)
	op := func(i int) string { return operandText(ops, i) }
	why := ""
	switch name {
	case "glab":
		if op(0) == "repo" && op(1) == "delete" {
			why = "glab repo delete (deletes the repository)"
		}
	case "terraform", "tofu", "terragrunt":
		if op(0) == "destroy" || op(0) == "apply" && (hasLong(args, "-destroy") || hasLong(args, "--destroy")) {
			why = name + " destroy (destroys the infrastructure it manages)"
		}
		for _, a := range args {
			if a.loose == "-destroy" && op(0) != "destroy" && op(0) != "apply" {
				why = name + " -destroy (plans the destruction of everything it manages)"
			}
		}
	case "kubectl", "oc":
		sub, rest := runnerSub(args, func(o string) bool { return takesValue("kubectl", o) })
		if sub != "delete" {
			break
		}
		kinds := operands(rest)
		for _, a := range rest {
			if a.loose == "--all" || a.loose == "-A" || a.loose == "--all-namespaces" {
				why = name + " delete " + a.loose + " (deletes every resource of the kind)"
			}
		}
		if len(kinds) > 0 {
			for _, k := range strings.Split(strings.ToLower(kinds[0].loose), ",") {
				switch strings.Split(k, "/")[0] {
				case "namespace", "namespaces", "ns", "node", "nodes", "no", "crd", "crds", "customresourcedefinition",
					"customresourcedefinitions", "pv", "persistentvolume", "persistentvolumes":
					why = name + " delete " + kinds[0].loose + " (deletes a namespace, node or volume with everything in it)"
				}
			}
		}
	case "aws":
		if op(0) == "s3" && (op(1) == "rb" && hasLong(args, "--force") || op(1) == "rm" && hasLong(args, "--recursive")) {
			why = "aws s3 " + op(1) + " (deletes a bucket's objects)"
		}
	case "gsutil":
		if op(0) == "rm" && (hasFlag(args, 'r', 'R', "--recursive")) || op(0) == "rb" {
			why = "gsutil " + op(0) + " (deletes a bucket's objects)"
		}
	case "gcloud":
		if op(0) == "projects" && op(1) == "delete" {
			why = "gcloud projects delete (deletes a project and everything in it)"
		}
	case "az":
		if op(0) == "group" && op(1) == "delete" {
			why = "az group delete (deletes a resource group and everything in it)"
		}
	case "heroku":
		if op(0) == "apps:destroy" || op(0) == "apps:delete" {
			why = "heroku " + op(0) + " (deletes the app)"
		}
	case "fly", "flyctl":
		if (op(0) == "apps" || op(0) == "app") && (op(1) == "destroy" || op(1) == "delete") || op(0) == "destroy" {
			why = name + " apps destroy (deletes the app)"
		}
	}
	if why != "" {
		z.a.danger(why)
	}
}
