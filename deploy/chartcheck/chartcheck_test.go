package main

import (
	"bytes"
	"strings"
	"testing"
)

// valid is a small rendering that passes: a hardened feedd serve
// Deployment, its Service and PodDisruptionBudget, and a ServiceMonitor.
const valid = `---
# Source: feedd/templates/pdb.yaml
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: feedd-serve
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      app: feedd
---
apiVersion: v1
kind: Service
metadata:
  name: feedd
spec:
  selector:
    app: feedd
  ports:
    - name: http
      port: 80
      targetPort: http
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: feedd-serve
spec:
  replicas: 2
  selector:
    matchLabels:
      app: feedd
  template:
    metadata:
      labels:
        app: feedd
    spec:
      terminationGracePeriodSeconds: 25
      securityContext:
        runAsNonRoot: true
      containers:
        - name: serve
          image: feedd:dev
          args: [serve]
          ports:
            - name: http
              containerPort: 8080
            - name: ops
              containerPort: 9090
          env:
            - name: FEED_SHUTDOWN_DELAY
              value: 5s
            - name: FEED_SHUTDOWN_TIMEOUT
              value: 10s
          readinessProbe:
            httpGet:
              path: /readyz
              port: ops
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: feedd
spec:
  selector:
    matchLabels:
      app: feedd
  endpoints:
    - port: ops
      interval: 30s
---
# a document of comments alone is skipped
`

func TestValidPasses(t *testing.T) {
	objs, err := Check([]byte(valid))
	if err != nil {
		t.Fatalf("Check(valid): %v", err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.Kind)
	}
	if got, want := strings.Join(kinds, ","), "PodDisruptionBudget,Service,Deployment,ServiceMonitor"; got != want {
		t.Errorf("decoded kinds %s, want %s", got, want)
	}
}

// TestRefuses changes the valid rendering in one place each and wants an
// error naming the problem: unknown fields at any depth (the Kubernetes
// types and the Prometheus Operator's), duplicated keys, wrong types,
// unknown kinds, and the chart checks.
func TestRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"unknown field in a Deployment's spec", "  replicas: 2\n", "  replicas: 2\n  replica: 3\n", `unknown field "spec.replica"`},
		{"unknown field in a container", "          args: [serve]\n", "          args: [serve]\n          readinessprobe: {}\n", `unknown field "spec.template.spec.containers[0].readinessprobe"`},
		{"unknown field in a PodDisruptionBudget", "  maxUnavailable: 1\n", "  maxUnavailable: 1\n  minAvailble: 1\n", `unknown field "spec.minAvailble"`},
		{"unknown field in a ServiceMonitor", "      interval: 30s\n", "      interval: 30s\n      scrapeTimout: 10s\n", `unknown field "spec.endpoints[0].scrapeTimout"`},
		{"duplicated key", "  replicas: 2\n", "  replicas: 2\n  replicas: 3\n", `"replicas" already set`},
		{"wrong type", "  replicas: 2\n", "  replicas: two\n", "cannot unmarshal string"},
		{"unknown kind", "kind: Service\n", "kind: Servise\n", "unknown apiVersion and kind"},
		{"unknown apiVersion", "apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n", "unknown apiVersion and kind"},
		{"no name", "  name: feedd-serve\nspec:\n  replicas", "  labels: {}\nspec:\n  replicas", "metadata.name is empty"},
		{"Service target port the pods lack", "      targetPort: http\n", "      targetPort: graphql\n", `targetPort "graphql" is not a port`},
		{"Service selecting no pods", "  selector:\n    app: feedd\n  ports", "  selector:\n    app: fed\n  ports", "selects the pods of no Deployment"},
		{"selector not matching the template", "      labels:\n        app: feedd\n", "      labels:\n        app: other\n", "does not select the pod template's labels"},
		{"probe on a missing port", "              port: ops\n", "              port: metrics\n", `names port "metrics"`},
		{"root file system writable", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "not hardened"},
		{"capabilities kept", "drop: [ALL]", "drop: [NET_RAW]", "not hardened"},
		{"termination grace shorter than the shutdown", "terminationGracePeriodSeconds: 25", "terminationGracePeriodSeconds: 15", "must exceed the shutdown delay plus timeout (15s)"},
		{"shutdown delay not a duration", "value: 5s", "value: five", `FEED_SHUTDOWN_DELAY="five" is not a duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.old) {
				t.Fatalf("the valid rendering has no %q to change", tc.old)
			}
			_, err := Check([]byte(strings.Replace(valid, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestEmptyInputRefused(t *testing.T) {
	if _, err := Check([]byte("---\n# nothing\n---\n")); err == nil || !strings.Contains(err.Error(), "no manifest") {
		t.Fatalf("Check(comments only) = %v, want a refusal", err)
	}
}

func TestRunExitStatus(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-"}, strings.NewReader(valid), &out, &errOut); code != 0 {
		t.Fatalf("run(valid) = %d, stderr %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "4 objects") {
		t.Errorf("run(valid) printed %q, want the object count", out.String())
	}
	out.Reset()
	errOut.Reset()
	bad := strings.Replace(valid, "  replicas: 2\n", "  replicas: 2\n  replica: 3\n", 1)
	if code := run([]string{"-"}, strings.NewReader(bad), &out, &errOut); code != 1 {
		t.Fatalf("run(unknown field) = %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "unknown field") {
		t.Errorf("stderr %q does not name the unknown field", errOut.String())
	}
}
