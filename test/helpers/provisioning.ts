// Test input for provisioning against the embedded API server: namespace team-a with GatewayClass
// gw, GwParameters team-a/ai and Gateway team-a/ai naming it (one HTTP listener on 8080).

/** The world with `spec` as GwParameters team-a/ai's spec (flow-style YAML). */
export function provisioningWorld(spec = '{}'): string {
  return `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: ai, namespace: team-a}
spec: ${spec}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai, namespace: team-a}
spec:
  gatewayClassName: gw
  infrastructure: {parametersRef: {group: gw.dev, kind: GwParameters, name: ai}}
  listeners: [{name: http, port: 8080, protocol: HTTP}]
`;
}
