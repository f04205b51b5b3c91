"""config/kubernetes/, checked without a cluster (none runs in CI).

Every object is validated against the Kubernetes API schemas, unknown fields
included, by kubernetes_schema.mjs (npm kubernetes-models, offline; it also
parses the YAML, so this file reads the objects from there). The pod is held
to the Pod Security Standard "restricted" (the rules of the pod-security
admission controller, as checked below, each rule shown able to fail), and to
the image and the binary: the readiness path is answered 200 and the liveness
port accepts, by a real folio started with the Deployment's environment;
probe ports and the Service's targetPort name the container port, which is the
Dockerfile's EXPOSE and PORT; non-root as the image's USER; the preStop delay
(the kubelet's sleep action: the image has no shell) and folio's grace end
before terminationGracePeriodSeconds; the image is a
placeholder that cannot be pulled. The Ingress objects: no regex and no
rewrite (ingress-nginx would make every path of the host a regex), the path
that wins for /__folio/health is one that readers cannot reach, and the
Service selects the pods. How nginx then behaves is rendered with a real nginx
in test_proxy.py (IngressRendered)."""
import copy
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from folio import Server, main, make_article, need  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.abspath(os.environ.get("FOLIO_SOURCE_ROOT") or os.path.join(HERE, "..", ".."))
K8S = os.path.join(SOURCE_ROOT, "config", "kubernetes")
VALIDATOR = os.path.join(HERE, "kubernetes_schema.mjs")
NODE = need("node", "nodejs")


def validate(*paths):
    """kubernetes_schema.mjs on these files: (exit status, [results])."""
    r = subprocess.run([NODE, VALIDATOR, *paths], capture_output=True, text=True, timeout=60,
                       cwd=os.path.join(SOURCE_ROOT, "tests"))
    if r.returncode not in (0, 1):
        raise AssertionError("kubernetes_schema.mjs failed (%d): %s%s" % (r.returncode, r.stdout, r.stderr))
    return r.returncode, json.loads(r.stdout)


def manifests():
    files = sorted(os.path.join(K8S, f) for f in os.listdir(K8S) if f.endswith(".yaml"))
    return files, validate(*files)


def dockerfile():
    """The runtime stage's EXPOSE, ENV PORT and USER."""
    with open(os.path.join(SOURCE_ROOT, "Dockerfile")) as f:
        text = f.read()
    runtime = text.rsplit("\nFROM ", 1)[1]
    return {
        "expose": int(re.search(r"(?m)^EXPOSE (\d+)", runtime).group(1)),
        "port": int(re.search(r"\bPORT=(\d+)", runtime).group(1)),
        "user": int(re.search(r"(?m)^USER (\d+)", runtime).group(1)),
    }


# ---- Pod Security Standards, "restricted" (which includes "baseline") ------------------------
# As the pod-security admission controller checks them (Kubernetes docs,
# "Pod Security Standards"), for the fields a Deployment's pod template has.
BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                 "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes"}


def restricted_violations(pod):
    """What keeps this pod spec out of a namespace labelled
    pod-security.kubernetes.io/enforce: restricted; [] when nothing does."""
    out = []
    psc = pod.get("securityContext") or {}
    containers = [c for key in ("initContainers", "containers", "ephemeralContainers")
                  for c in pod.get(key) or []]
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key):
            out.append(key)
    for v in pod.get("volumes") or []:
        kind = [k for k in v if k != "name"]
        if "hostPath" in kind:
            out.append("hostPath volume " + v["name"])
        elif not set(kind) <= RESTRICTED_VOLUMES:
            out.append("volume type %s (%s)" % (kind, v["name"]))
    for s in psc.get("sysctls") or []:
        if s["name"] not in SAFE_SYSCTLS:
            out.append("sysctl " + s["name"])

    def effective(c, key):
        csc = c.get("securityContext") or {}
        return csc.get(key, psc.get(key))

    for c in containers:
        csc = c.get("securityContext") or {}
        name = c["name"]
        if csc.get("privileged"):
            out.append(name + ": privileged")
        if any(p.get("hostPort") for p in c.get("ports") or []):
            out.append(name + ": hostPort")
        if csc.get("procMount", "Default") != "Default":
            out.append(name + ": procMount")
        if csc.get("allowPrivilegeEscalation") is not False:
            out.append(name + ": allowPrivilegeEscalation must be false")
        if effective(c, "runAsNonRoot") is not True:
            out.append(name + ": runAsNonRoot must be true")
        if effective(c, "runAsUser") == 0:
            out.append(name + ": runAsUser 0")
        seccomp = (effective(c, "seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(name + ": seccompProfile must be RuntimeDefault or Localhost (is %s)" % seccomp)
        caps = csc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            out.append(name + ": capabilities must drop ALL")
        for cap in caps.get("add") or []:
            if cap != "NET_BIND_SERVICE":
                out.append(name + ": capability " + cap + (" (not even baseline)" if cap not in BASELINE_CAPS else ""))
        apparmor = (effective(c, "appArmorProfile") or {}).get("type")
        if apparmor == "Unconfined":
            out.append(name + ": appArmorProfile Unconfined")
        selinux = effective(c, "seLinuxOptions") or {}
        if selinux.get("type", "") not in ("", "container_t", "container_init_t", "container_kvm_t") \
                or selinux.get("user") or selinux.get("role"):
            out.append(name + ": seLinuxOptions")
    return out


def ingress_route(ingresses, host, path):
    """The Ingress (and its path) ingress-nginx picks for host and path: the
    longest matching Prefix or Exact path of that host over all Ingress
    objects (no regex: test_ingress_is_plain holds that)."""
    best = None
    for ing in ingresses:
        for rule in ing["spec"]["rules"]:
            if rule.get("host") != host:
                continue
            for p in rule["http"]["paths"]:
                want, kind = p["path"], p["pathType"]
                if kind == "Exact":
                    hit = path == want
                else:  # Prefix: element-wise, /a matches /a and /a/b, not /ab
                    hit = want == "/" or path == want.rstrip("/") or path.startswith(want.rstrip("/") + "/")
                if hit and (best is None or len(want) > len(best[1]["path"])
                            or (len(want) == len(best[1]["path"]) and kind == "Exact")):
                    best = (ing, p)
    return best


class Manifests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.files, (cls.status, cls.results) = manifests()
        objects = [r["object"] for r in cls.results]
        by_kind = lambda k: [o for o in objects if o and o["kind"] == k]
        cls.deployment, = by_kind("Deployment")
        cls.service, = by_kind("Service")
        cls.ingresses = by_kind("Ingress")
        cls.pod = cls.deployment["spec"]["template"]["spec"]
        cls.container = cls.pod["containers"][0]
        cls.env = {e["name"]: str(e["value"]) for e in cls.container.get("env", [])}
        cls.image = dockerfile()

    def port_of(self, name_or_number):
        for p in self.container["ports"]:
            if name_or_number in (p.get("name"), p["containerPort"]):
                return p["containerPort"]
        self.fail("no container port %r" % name_or_number)

    # -- the schemas ---------------------------------------------------------------------------
    def test_every_object_is_valid(self):
        for r in self.results:
            self.assertEqual(r["errors"], [], "%s: %s %s" % (os.path.basename(r["file"]), r["kind"], r["name"]))
        self.assertEqual(self.status, 0)
        self.assertEqual(sorted(r["kind"] for r in self.results), ["Deployment", "Ingress", "Ingress", "Service"])

    def test_the_validator_rejects_what_a_cluster_would(self):
        tmp = tempfile.mkdtemp(prefix="folio-k8s-")
        try:
            with open(os.path.join(K8S, "deployment.yaml")) as f:
                text = f.read()
            cases = {
                "typo": (text.replace("seccompProfile:", "seccompProfle:"), 'unknown field "seccompProfle"'),
                "type": (text.replace("containerPort: 8080", 'containerPort: "8080"'), "must be integer"),
                "enum": (text.replace("type: RuntimeDefault", "type: Default"), "allowed values"),
                "required": (text.replace("- name: folio\n", "- nam: folio\n"), "must have required property name"),
                "yaml": (text.replace("  replicas: 2", "  replicas: 2\n replicas: 3"), ""),
            }
            for name, (bad, expect) in cases.items():
                self.assertNotEqual(bad, text, name)
                path = os.path.join(tmp, name + ".yaml")
                with open(path, "w") as f:
                    f.write(bad)
                status, results = validate(path)
                self.assertEqual(status, 1, name)
                self.assertIn(expect, "\n".join(results[0]["errors"]), name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    # -- Pod Security "restricted" -------------------------------------------------------------
    def test_pod_security_restricted(self):
        self.assertEqual(restricted_violations(self.pod), [])
        self.assertEqual(self.pod["securityContext"]["runAsUser"], self.image["user"])
        self.assertTrue(self.container["securityContext"]["readOnlyRootFilesystem"])
        self.assertFalse(self.pod["automountServiceAccountToken"])

    def test_restricted_rules_can_fail(self):
        def changed(edit):
            pod = copy.deepcopy(self.pod)
            edit(pod, pod["containers"][0].setdefault("securityContext", {}))
            return restricted_violations(pod)

        cases = [
            (lambda p, c: p["securityContext"].pop("seccompProfile"), "seccompProfile must be"),
            (lambda p, c: c.update(seccompProfile={"type": "Unconfined"}), "seccompProfile must be"),
            (lambda p, c: c.update(allowPrivilegeEscalation=True), "allowPrivilegeEscalation"),
            (lambda p, c: p["securityContext"].pop("runAsNonRoot"), "runAsNonRoot"),
            (lambda p, c: c.update(runAsUser=0), "runAsUser 0"),
            (lambda p, c: c.update(capabilities={"drop": ["ALL"], "add": ["NET_RAW"]}), "capability NET_RAW"),
            (lambda p, c: c.update(capabilities={}), "drop ALL"),
            (lambda p, c: c.update(privileged=True), "privileged"),
            (lambda p, c: p.update(hostNetwork=True), "hostNetwork"),
            (lambda p, c: p.update(volumes=[{"name": "h", "hostPath": {"path": "/"}}]), "hostPath"),
            (lambda p, c: p.update(initContainers=[{"name": "init", "image": "x"}]), "init: allowPrivilegeEscalation"),
        ]
        for edit, expect in cases:
            self.assertIn(expect, "\n".join(changed(edit)))

    # -- the Deployment against the image and folio --------------------------------------------
    def test_deployment(self):
        d = self.deployment
        self.assertGreaterEqual(d["spec"]["replicas"], 2)
        labels = d["spec"]["template"]["metadata"]["labels"]
        self.assertEqual(d["spec"]["selector"]["matchLabels"], labels)
        self.assertEqual(self.port_of("http"), self.image["expose"])
        self.assertEqual(self.image["expose"], self.image["port"])
        self.assertFalse(self.pod["enableServiceLinks"])  # else FOLIO_PORT=tcp://... is set
        requests = self.container["resources"]["requests"]
        self.assertTrue(requests["cpu"] and requests["memory"])

    def test_image_is_a_placeholder_that_cannot_be_pulled(self):
        image = self.container["image"]
        registry, _, rest = image.partition("/")
        self.assertTrue(registry.endswith(".invalid"), image)  # RFC 6761: never resolves
        self.assertRegex(rest, r"^folio:\d+\.\d+\.\d+$")         # a version, not :latest
        with open(os.path.join(SOURCE_ROOT, "docs", "deploy.md")) as f:
            deploy = f.read().split("\n## Kubernetes", 1)[1].split("\n## ", 1)[0]
        self.assertIn(registry, deploy)  # docs/deploy.md says to replace it

    def test_stop_ends_before_the_kill(self):
        # The kubelet's sleep action: the image has no sleep binary (the
        # container suite holds the image to that).
        self.assertEqual(list(self.container["lifecycle"]["preStop"]), ["sleep"])
        pause = self.container["lifecycle"]["preStop"]["sleep"]["seconds"]
        grace = int(self.env["FOLIO_GRACE"])
        self.assertGreaterEqual(pause, 3)  # endpoints and kube-proxy catch up
        # After preStop, SIGTERM; folio takes up to its grace; a margin for the exit.
        self.assertLessEqual(pause + grace + 3, self.pod["terminationGracePeriodSeconds"])

    def test_probes_are_distinct_and_answered(self):
        ready, live = self.container["readinessProbe"], self.container["livenessProbe"]
        self.assertNotEqual({k: v for k, v in ready.items() if k in ("httpGet", "tcpSocket", "exec")},
                            {k: v for k, v in live.items() if k in ("httpGet", "tcpSocket", "exec")})
        self.assertEqual(self.port_of(ready["httpGet"]["port"]), self.image["port"])
        self.assertEqual(self.port_of(live["tcpSocket"]["port"]), self.image["port"])
        # Liveness gives more time than readiness: a slow pod leaves the Service long before a restart.
        self.assertGreater(live["periodSeconds"] * live["failureThreshold"],
                           ready["periodSeconds"] * ready["failureThreshold"])
        # A real folio with the pod's environment answers both.
        tmp = tempfile.mkdtemp(prefix="folio-k8s-")
        try:
            root = make_article(os.path.join(tmp, "article"))
            with Server(root, "--production", env=self.env) as s:
                self.assertEqual(s.get(ready["httpGet"]["path"]).status, 200)
                socket.create_connection(("127.0.0.1", s.port), timeout=live["timeoutSeconds"]).close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    # -- Service and Ingress -------------------------------------------------------------------
    def test_service_selects_the_pods(self):
        svc = self.service
        labels = self.deployment["spec"]["template"]["metadata"]["labels"]
        self.assertTrue(svc["spec"]["selector"].items() <= labels.items())
        port = svc["spec"]["ports"][0]
        self.assertEqual(self.port_of(port["targetPort"]), self.image["port"])
        for ing in self.ingresses:
            for rule in ing["spec"]["rules"]:
                for p in rule["http"]["paths"]:
                    self.assertEqual(p["backend"]["service"]["name"], svc["metadata"]["name"])
                    self.assertEqual(p["backend"]["service"]["port"]["name"], port["name"])

    def test_ingress_is_plain(self):
        for ing in self.ingresses:
            notes = ing["metadata"].get("annotations") or {}
            self.assertNotIn("nginx.ingress.kubernetes.io/use-regex", notes)
            self.assertNotIn("nginx.ingress.kubernetes.io/rewrite-target", notes)  # implies regex for the host
            self.assertFalse([k for k in notes if "snippet" in k])  # off by default in ingress-nginx
            for rule in ing["spec"]["rules"]:
                for p in rule["http"]["paths"]:
                    self.assertIn(p["pathType"], ("Prefix", "Exact"))
        public = ingress_route(self.ingresses, "article.example.org", "/")[0]
        # folio is not told a prefix; the client cannot tell it one either.
        self.assertEqual(public["metadata"]["annotations"]["nginx.ingress.kubernetes.io/x-forwarded-prefix"], "/")
        self.assertEqual(self.env.get("FOLIO_TRUST_PROXY"), "yes")

    def test_health_is_not_public(self):
        host = "article.example.org"
        for path in ("/__folio/health", "/__folio", "/__folio/events", "/__folio/reload.js"):
            ing, p = ingress_route(self.ingresses, host, path)
            allow = ing["metadata"].get("annotations", {}).get("nginx.ingress.kubernetes.io/allowlist-source-range")
            self.assertEqual(allow, "127.0.0.1/32", path)
        for path in ("/", "/style.css", "/assets/x.png", "/__folioX"):
            ing, p = ingress_route(self.ingresses, host, path)
            self.assertNotIn("nginx.ingress.kubernetes.io/allowlist-source-range",
                             ing["metadata"].get("annotations", {}), path)

    def test_route_picking(self):
        ings = [{"metadata": {}, "spec": {"rules": [{"host": "h", "http": {"paths": [
            {"path": "/", "pathType": "Prefix"}, {"path": "/a", "pathType": "Prefix"},
            {"path": "/a/b", "pathType": "Exact"}]}}]}}]
        pick = lambda path: ingress_route(ings, "h", path)[1]["path"]
        self.assertEqual([pick(x) for x in ("/", "/a", "/a/", "/ab", "/a/b", "/a/b/c")],
                         ["/", "/a", "/a", "/", "/a/b", "/a"])
        self.assertIsNone(ingress_route(ings, "other", "/"))


if __name__ == "__main__":
    main()
