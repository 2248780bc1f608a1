# A loopback fake of the Kubernetes API for the verify tests, driven through the real kubectl
# proxy: python3 fake_kube_api.py PORT [--deny 'pods watch,deployments.apps patch'] [--no-slices]
# [--app naive|graceful] [--no-rollout]. Prints "listening" once it accepts.
#
# It holds one Deployment "web" (namespace "shop", 2 replicas) behind Service "web", with pods,
# EndpointSlices and Events; list and watch (resourceVersion, bookmarks, chunked streams); the
# SelfSubjectAccessReview; and a rollout on a restart PATCH that steps like the Deployment
# controller (surge one, wait Ready, delete one old). GET /app answers as the app would: 200 with
# X-Pod-Name from a ready, serving pod; with --app naive a deleted pod stops at once while the
# "routers" (this answer) keep sending it new connections for 0.5 s: those are reset.
import argparse, http.server, json, socket, sys, threading, time

p = argparse.ArgumentParser()
p.add_argument("port", type=int)
p.add_argument("--deny", default="")
p.add_argument("--no-slices", action="store_true")
p.add_argument("--app", default="graceful")
p.add_argument("--no-rollout", action="store_true")
args = p.parse_args()
DENY = {d.strip() for d in args.deny.split(",") if d.strip()}
NS = "shop"
lock = threading.Condition()
rv = [100]
log = []  # (rv, resource, type, object)
objects = {"deployments": {}, "pods": {}, "endpointslices": {}, "events": {}}
pod_count = [0]
stopped_at = {}  # pod -> when its process stopped (naive: at deletion)


def now_rfc():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def put(resource, obj, kind="MODIFIED"):
    with lock:
        rv[0] += 1
        obj["metadata"]["resourceVersion"] = str(rv[0])
        name = obj["metadata"]["name"]
        if kind == "DELETED":
            objects[resource].pop(name, None)
        else:
            objects[resource][name] = obj
        log.append((rv[0], resource, kind, json.loads(json.dumps(obj))))
        lock.notify_all()


def new_pod(ready):
    pod_count[0] += 1
    name = "web-%d" % pod_count[0]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": NS, "labels": {"app": "web"}},
           "spec": {"nodeName": "node-1"},
           "status": {"podIP": "10.0.0.%d" % pod_count[0],
                      "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                      "containerStatuses": [{"name": "app", "state": {"running": {}}}]}}
    put("pods", pod, "ADDED")
    return name


def endpoints_changed():
    if args.no_slices:
        return
    eps = []
    for name, pod in sorted(objects["pods"].items()):
        ready = pod["status"]["conditions"][0]["status"] == "True"
        terminating = "deletionTimestamp" in pod["metadata"]
        eps.append({"addresses": [pod["status"]["podIP"]],
                    "conditions": {"ready": ready and not terminating, "serving": ready,
                                   "terminating": terminating},
                    "targetRef": {"kind": "Pod", "name": name, "namespace": NS}})
    put("endpointslices", {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                           "metadata": {"name": "web-abcde", "namespace": NS,
                                        "labels": {"kubernetes.io/service-name": "web"}},
                           "addressType": "IPv4", "endpoints": eps})


def deployment(generation, updated):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": NS, "generation": generation},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"terminationGracePeriodSeconds": 30, "containers": [
                                      {"name": "app", "image": "web:1",
                                       "ports": [{"containerPort": 8080}],
                                       "readinessProbe": {"httpGet": {"path": "/ready",
                                                                      "port": 8080}}}]}}},
            "status": {"observedGeneration": generation, "replicas": 2,
                       "updatedReplicas": updated, "readyReplicas": 2,
                       "availableReplicas": updated}}


def kube_event(pod, reason, message):
    name = "%s.%d" % (pod, rv[0])
    put("events", {"apiVersion": "v1", "kind": "Event",
                   "metadata": {"name": name, "namespace": NS},
                   "involvedObject": {"kind": "Pod", "name": pod, "namespace": NS},
                   "reason": reason, "message": message}, "ADDED")


def set_ready(name):
    pod = json.loads(json.dumps(objects["pods"][name]))
    pod["status"]["conditions"][0]["status"] = "True"
    put("pods", pod)
    endpoints_changed()


def terminated(pod, code):
    pod["status"]["containerStatuses"][0]["state"] = {
        "terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                       "finishedAt": now_rfc()}}
    pod["status"]["conditions"][0]["status"] = "False"
    put("pods", pod)


def delete_pod(name):
    pod = json.loads(json.dumps(objects["pods"][name]))
    pod["metadata"]["deletionTimestamp"] = now_rfc()
    pod["metadata"]["deletionGracePeriodSeconds"] = 30
    put("pods", pod)
    kube_event(name, "Killing", "Stopping container app")
    endpoints_changed()
    if args.app == "naive":
        # Dies at SIGTERM (no preStop): kubelet reports it at once, while the routers keep
        # sending it new connections for another 0.5 s (they are reset).
        time.sleep(0.05)
        stopped_at[name] = time.time()
        terminated(pod, 143)
        time.sleep(0.5)
    else:
        time.sleep(1.0)  # keeps serving until every router has dropped it, then drains and exits
        stopped_at[name] = time.time()
        terminated(pod, 0)
    put("pods", pod, "DELETED")
    endpoints_changed()


generation = [1]


def rollout():
    old = sorted(objects["pods"])
    generation[0] += 1
    put("deployments", deployment(generation[0], 0))
    for i, victim in enumerate(old):
        time.sleep(0.3)
        name = new_pod(False)
        endpoints_changed()
        time.sleep(0.3)
        set_ready(name)
        put("deployments", deployment(generation[0], i + 1))
        delete_pod(victim)


def setup():
    put("deployments", deployment(1, 2), "ADDED")
    for _ in range(2):
        new_pod(True)
    endpoints_changed()


def allowed(spec):
    a = spec.get("resourceAttributes", {})
    group = a.get("group", "")
    text = "%s%s %s" % (a.get("resource"), "." + group if group else "", a.get("verb"))
    return text not in DENY


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def status(self, code, message):
        self.send_json(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                              "message": message, "code": code})

    def do_GET(self):
        path, _, query = self.path.partition("?")
        q = dict(kv.partition("=")[::2] for kv in query.split("&") if kv)
        if path == "/app":
            return self.app()
        if path == "/version":
            return self.send_json(200, {"gitVersion": "v1.30.0-fake", "major": "1", "minor": "30"})
        if path == "/apis/discovery.k8s.io/v1":
            if args.no_slices:
                return self.status(404, "the server could not find the requested resource")
            return self.send_json(200, {"kind": "APIResourceList", "groupVersion":
                                        "discovery.k8s.io/v1", "resources": []})
        parts = path.strip("/").split("/")
        # /api/v1/namespaces/NS/R[/NAME] or /apis/G/V/namespaces/NS/R[/NAME]
        base = 2 if parts[0] == "api" else 3
        if len(parts) < base + 3 or parts[base] != "namespaces" or parts[base + 1] != NS:
            return self.status(404, "not found")
        resource = parts[base + 2]
        name = parts[base + 3] if len(parts) > base + 3 else None
        if resource == "services":
            svc = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "web", "namespace": NS},
                   "spec": {"selector": {"app": "web"}, "ports": [{"port": 80,
                                                                   "targetPort": 8080}]}}
            if name:
                return self.send_json(200, svc) if name == "web" else self.status(
                    404, 'services "%s" not found' % name)
            return self.send_json(200, {"kind": "ServiceList", "metadata": {}, "items": [svc]})
        if resource not in objects:
            return self.status(404, "not found")
        if name:
            with lock:
                obj = objects[resource].get(name)
            return self.send_json(200, obj) if obj else self.status(
                404, '%s.apps "%s" not found' % (resource, name))
        if q.get("watch") in ("true", "1"):
            return self.watch(resource, int(q.get("resourceVersion", "0") or 0),
                              int(q.get("timeoutSeconds", "30")))
        with lock:
            items = list(objects[resource].values())
            version = str(rv[0])
        self.send_json(200, {"kind": "List", "metadata": {"resourceVersion": version},
                             "items": items})

    def app(self):
        with lock:
            serving = [n for n, pod in objects["pods"].items()
                       if pod["status"]["conditions"][0]["status"] == "True"
                       and n not in stopped_at]
            dead = [n for n, t in stopped_at.items() if time.time() - t < 0.5]
        if args.app == "naive" and dead:
            self.close_connection = True  # a new connection to a stopped pod: reset
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
            return
        body = b"ok\n"
        self.send_response(200 if serving else 503)
        self.send_header("Content-Length", str(len(body)))
        if serving:
            self.send_header("X-Pod-Name", serving[0])
        self.end_headers()
        self.wfile.write(body)

    def chunk(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, resource, since, timeout):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        deadline = time.time() + min(timeout, 5)
        seen = since
        try:
            while time.time() < deadline:
                with lock:
                    news = [e for e in log if e[0] > seen and e[1] == resource]
                    if not news:
                        lock.wait(0.2)
                        continue
                for version, _, kind, obj in news:
                    self.chunk({"type": kind, "object": obj})
                    seen = version
            self.chunk({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": str(seen)}}})
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.path.startswith("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"):
            body["status"] = {"allowed": allowed(body.get("spec", {}))}
            return self.send_json(201, body)
        self.status(404, "not found")

    def do_PATCH(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if "/deployments/web" not in self.path:
            return self.status(404, "not found")
        if not args.no_rollout:
            threading.Thread(target=rollout, daemon=True).start()
        self.send_json(200, objects["deployments"]["web"])

    def log_message(self, *a):
        pass


setup()
server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
server.daemon_threads = True
print("listening", flush=True)
server.serve_forever()
