"""config/kubernetes/, checked without a cluster (none runs in CI): the
manifests are read (a minimal YAML reader for the block style they are
written in; the standard library has none) and held against the image the
Dockerfile builds and the binary: probe paths are answered 200 by a real
folio started with the Deployment's environment, probe ports and the
Service's targetPort name the container port, which is the Dockerfile's
EXPOSE and PORT; non-root as the image's USER, read-only root, no
capabilities, resource requests; the Service selects the pods; the Ingress
routes its prefix to the Service and tells folio that prefix."""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from folio import Server, main, make_article  # noqa: E402

SOURCE_ROOT = os.path.abspath(os.environ.get("FOLIO_SOURCE_ROOT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", ".."))
K8S = os.path.join(SOURCE_ROOT, "config", "kubernetes")


def scalar(text):
    text = re.sub(r"\s+#.*$", "", text).strip()
    if text[:1] in "[{\"":
        return json.loads(text)
    if text[:1] == "'":
        return text[1:-1].replace("''", "'")
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def parse_yaml(text):
    """Block mappings, block sequences and plain, quoted or JSON-flow scalars:
    the YAML these manifests use, and nothing more (anything else raises)."""
    lines = []
    for raw in text.splitlines():
        if raw.strip() and not raw.lstrip().startswith("#"):
            if "\t" in raw[:len(raw) - len(raw.lstrip())]:
                raise ValueError("tab indentation: " + raw)
            lines.append([len(raw) - len(raw.lstrip()), raw.strip()])

    def block(i, indent):
        if lines[i][1].startswith("- "):
            items = []
            while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
                rest = lines[i][1][2:]
                if re.match(r"[\w.\-/]+:(\s|$)", rest):  # "- key: value" opens a mapping
                    lines[i] = [indent + 2, rest]
                    value, i = block(i, indent + 2)
                else:
                    value, i = scalar(rest), i + 1
                items.append(value)
            return items, i
        mapping = {}
        while i < len(lines) and lines[i][0] == indent and not lines[i][1].startswith("- "):
            m = re.fullmatch(r"([\w.\-/]+):(?:\s+(.*))?", lines[i][1])
            if not m:
                raise ValueError("not key: value: " + lines[i][1])
            key, rest = m.group(1), m.group(2)
            i += 1
            if rest is not None and not rest.startswith("#"):
                mapping[key] = scalar(rest)
            elif i < len(lines) and (lines[i][0] > indent or
                                     (lines[i][0] == indent and lines[i][1].startswith("- "))):
                mapping[key], i = block(i, lines[i][0])
            else:
                mapping[key] = None
        return mapping, i

    value, end = block(0, lines[0][0])
    if end != len(lines):
        raise ValueError("unparsed from: " + lines[end][1])
    return value


def load(name):
    with open(os.path.join(K8S, name)) as f:
        return parse_yaml(f.read())


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


class Manifests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.deployment = load("deployment.yaml")
        cls.service = load("service.yaml")
        cls.ingress = load("ingress.yaml")
        cls.pod = cls.deployment["spec"]["template"]["spec"]
        cls.container = cls.pod["containers"][0]
        cls.image = dockerfile()

    def port_of(self, name_or_number):
        for p in self.container["ports"]:
            if name_or_number in (p.get("name"), p["containerPort"]):
                return p["containerPort"]
        self.fail("no container port %r" % name_or_number)

    def test_reader_reads_what_it_is_given(self):
        doc = parse_yaml("a:\n  b: 1\n  c: [\"x\"]\nd:\n  - e: 'f'\n    g: true\n  - h\n")
        self.assertEqual(doc, {"a": {"b": 1, "c": ["x"]}, "d": [{"e": "f", "g": True}, "h"]})
        with self.assertRaises(ValueError):
            parse_yaml("a: 1\n  b: 2\n")

    def test_deployment(self):
        d = self.deployment
        self.assertEqual((d["apiVersion"], d["kind"]), ("apps/v1", "Deployment"))
        self.assertGreaterEqual(d["spec"]["replicas"], 2)
        labels = d["spec"]["template"]["metadata"]["labels"]
        self.assertEqual(d["spec"]["selector"]["matchLabels"], labels)
        self.assertEqual(self.container["image"].split("/")[-1].split(":")[0], "folio")
        self.assertEqual(self.port_of("http"), self.image["expose"])
        self.assertEqual(self.image["expose"], self.image["port"])
        self.assertFalse(self.pod["enableServiceLinks"])  # else FOLIO_PORT=tcp://... is set
        self.assertGreater(self.pod["terminationGracePeriodSeconds"], 10)  # folio's grace

    def test_security(self):
        pod, c = self.pod["securityContext"], self.container["securityContext"]
        self.assertTrue(pod["runAsNonRoot"])
        self.assertEqual(pod["runAsUser"], self.image["user"])
        self.assertTrue(c["readOnlyRootFilesystem"])
        self.assertFalse(c["allowPrivilegeEscalation"])
        self.assertEqual(c["capabilities"]["drop"], ["ALL"])
        requests = self.container["resources"]["requests"]
        self.assertTrue(requests["cpu"] and requests["memory"])

    def test_probes_are_answered(self):
        env = {e["name"]: str(e["value"]) for e in self.container.get("env", [])}
        probes = [self.container[k] for k in ("readinessProbe", "livenessProbe")]
        for probe in probes:
            self.assertEqual(self.port_of(probe["httpGet"]["port"]), self.image["port"])
        # A real folio with the pod's environment answers every probe path with 200.
        tmp = tempfile.mkdtemp(prefix="folio-k8s-")
        try:
            root = make_article(os.path.join(tmp, "article"))
            with Server(root, "--production", env=env) as s:
                for probe in probes:
                    self.assertEqual(s.get(probe["httpGet"]["path"]).status, 200)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_service_and_ingress(self):
        svc = self.service
        self.assertEqual(svc["kind"], "Service")
        labels = self.deployment["spec"]["template"]["metadata"]["labels"]
        self.assertTrue(svc["spec"]["selector"].items() <= labels.items())
        port = svc["spec"]["ports"][0]
        self.assertEqual(self.port_of(port["targetPort"]), self.image["port"])
        ing = self.ingress
        self.assertEqual((ing["apiVersion"], ing["kind"]), ("networking.k8s.io/v1", "Ingress"))
        path = ing["spec"]["rules"][0]["http"]["paths"][0]
        backend = path["backend"]["service"]
        self.assertEqual(backend["name"], svc["metadata"]["name"])
        self.assertEqual(backend["port"]["name"], port["name"])
        prefix = ing["metadata"]["annotations"]["nginx.ingress.kubernetes.io/x-forwarded-prefix"]
        self.assertTrue(path["path"].startswith(prefix + "/"))
        env = {e["name"]: str(e["value"]) for e in self.container["env"]}
        self.assertEqual(env.get("FOLIO_TRUST_PROXY"), "yes")  # so folio takes that prefix


if __name__ == "__main__":
    main()
