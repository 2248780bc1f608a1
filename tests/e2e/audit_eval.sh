#!/bin/bash
# zerodrop audit on real public manifests ($SHARED_DIR/eval/manifests, read in place, never
# copied): no crash, exactly the findings documented below per workload (each with its cause),
# and the known holes of the eval README found. Each project is audited on its own, as its
# users would (their objects carry no namespace, so projects audited together would share one).
source "$(dirname "$0")/lib.sh"
EVAL="${SHARED_DIR:-}/eval/manifests"
[ -d "$EVAL" ] || skip "no evaluation set at $EVAL (shared/eval is not on this machine)"

# file object container rule   -- why it is a real cause
cat > "$WORK/want" <<'WANT'
# microservices-demo: no preStop anywhere; grace 5 s on 7 services (5 < 0 + 5 drain + 2 margin);
# no replicas (1 pod each); gRPC or HTTP readiness and liveness on one handler in every service.
adservice.yaml adservice server prestop-missing
adservice.yaml adservice - grace-too-short
adservice.yaml adservice server liveness-same-as-readiness
adservice.yaml adservice - replicas-too-few
cartservice.yaml cartservice server prestop-missing
cartservice.yaml cartservice - grace-too-short
cartservice.yaml cartservice server liveness-same-as-readiness
cartservice.yaml cartservice - replicas-too-few
cartservice.yaml redis-cart redis prestop-missing
cartservice.yaml redis-cart redis liveness-same-as-readiness
cartservice.yaml redis-cart - replicas-too-few
checkoutservice.yaml checkoutservice server prestop-missing
checkoutservice.yaml checkoutservice server liveness-same-as-readiness
checkoutservice.yaml checkoutservice - replicas-too-few
currencyservice.yaml currencyservice server prestop-missing
currencyservice.yaml currencyservice - grace-too-short
currencyservice.yaml currencyservice server liveness-same-as-readiness
currencyservice.yaml currencyservice - replicas-too-few
emailservice.yaml emailservice server prestop-missing
emailservice.yaml emailservice - grace-too-short
emailservice.yaml emailservice server liveness-same-as-readiness
emailservice.yaml emailservice - replicas-too-few
# frontend: readiness and liveness both GET /_healthz :8080 (the README's identical probes).
frontend.yaml frontend server prestop-missing
frontend.yaml frontend server liveness-same-as-readiness
frontend.yaml frontend - replicas-too-few
# loadgenerator: no Service selects it, so traffic rules are skipped (said at info).
loadgenerator.yaml loadgenerator - no-traffic
paymentservice.yaml paymentservice server prestop-missing
paymentservice.yaml paymentservice - grace-too-short
paymentservice.yaml paymentservice server liveness-same-as-readiness
paymentservice.yaml paymentservice - replicas-too-few
productcatalogservice.yaml productcatalogservice server prestop-missing
productcatalogservice.yaml productcatalogservice - grace-too-short
productcatalogservice.yaml productcatalogservice server liveness-same-as-readiness
productcatalogservice.yaml productcatalogservice - replicas-too-few
recommendationservice.yaml recommendationservice server prestop-missing
recommendationservice.yaml recommendationservice - grace-too-short
recommendationservice.yaml recommendationservice server liveness-same-as-readiness
recommendationservice.yaml recommendationservice - replicas-too-few
shippingservice.yaml shippingservice server prestop-missing
shippingservice.yaml shippingservice server liveness-same-as-readiness
shippingservice.yaml shippingservice - replicas-too-few
# podinfo (the mostly correct baseline): maxUnavailable 0, distinct exec probes and HPAs raise
# nothing. What remains: no preStop; the backend HPA's minReplicas 1; cache (no replicas, no
# HPA) and the database primary (replicas 1) run one pod; three workloads of 2+ replicas have
# no PDB (the PDB is in the Helm chart only). CronJobs are not rolled and are skipped.
deploy_bases_backend_deployment.yaml backend backend prestop-missing
deploy_bases_backend_hpa.yaml backend - replicas-too-few
deploy_bases_cache_deployment.yaml cache redis prestop-missing
deploy_bases_cache_deployment.yaml cache - replicas-too-few
deploy_bases_database_deployment-replica.yaml database-replica database prestop-missing
deploy_bases_database_deployment-replica.yaml database-replica - pdb-missing
deploy_bases_database_statefulset-primary.yaml database-primary database prestop-missing
deploy_bases_database_statefulset-primary.yaml database-primary - replicas-too-few
deploy_bases_frontend_deployment.yaml frontend frontend prestop-missing
deploy_bases_frontend_deployment.yaml frontend - pdb-missing
kustomize_deployment.yaml podinfo podinfod prestop-missing
kustomize_deployment.yaml podinfo - pdb-missing
# aks-store-demo (two variants of the same app): every workload replicas 1; startup,
# readiness and liveness on one handler (httpGet /health, or TCP 5672 for RabbitMQ, which is
# AMQP, so TCP readiness is right there); no preStop.
WANT
for variant in aks-store-ingress-quickstart.yaml aks-store-quickstart.yaml; do
  for w in "rabbitmq rabbitmq" "order-service order-service" "product-service product-service" \
           "store-front store-front"; do
    set -- $w
    printf '%s %s %s prestop-missing\n%s %s %s liveness-same-as-readiness\n%s %s - replicas-too-few\n' \
      "$variant" "$1" "$2" "$variant" "$1" "$2" "$variant" "$1" >> "$WORK/want"
  done
done

: > "$WORK/got"
for project in microservices-demo podinfo aks-store-demo; do
  [ -d "$EVAL/$project" ] || fail "missing $EVAL/$project"
  code=0
  "$ZERODROP" audit --format json "$EVAL/$project" > "$WORK/$project.json" 2> "$WORK/err" || code=$?
  [ "$code" = 1 ] || { cat "$WORK/err"; fail "$project: exit $code, expected 1 (errors found)"; }
  python3 - "$WORK/$project.json" >> "$WORK/got" <<'PY' || fail "$project: bad JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
for f in doc["findings"]:
    assert f["line"] >= 1 and f["column"] >= 1, f
    assert f["message"] and f["fix"], f
    print(f["file"].split("/")[-1], f["object"]["name"], f["object"]["container"] or "-", f["rule"])
PY
done
grep -v '^#' "$WORK/want" | sort > "$WORK/want.sorted"
sort "$WORK/got" > "$WORK/got.sorted"
if ! diff -u "$WORK/want.sorted" "$WORK/got.sorted"; then
  fail "findings differ from the documented ones (- documented, + found)"
fi
# The known holes of the eval README, by name.
expect_grep 'frontend.yaml frontend server liveness-same-as-readiness' "$WORK/got"
expect_grep 'adservice.yaml adservice - grace-too-short' "$WORK/got"
expect_grep 'aks-store-quickstart.yaml store-front store-front liveness-same-as-readiness' "$WORK/got"
for project in microservices-demo podinfo aks-store-demo; do
  if grep -q '"rule": "pdb-missing"' "$WORK/$project.json" && [ "$project" = aks-store-demo ]; then
    fail "aks-store-demo runs one replica: a PDB would only block drains"
  fi
done
echo "audit_eval: $(wc -l < "$WORK/got.sorted") findings, all documented"
