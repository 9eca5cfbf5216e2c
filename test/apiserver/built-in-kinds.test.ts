// The built-in kinds gw's provisioning writes (apps/v1 Deployment and DaemonSet, v1
// ServiceAccount, policy/v1 PodDisruptionBudget, autoscaling/v2 HorizontalPodAutoscaler, the RBAC
// kinds), driven by the real kubectl against the embedded API server: create, get (kube-apiserver's
// columns, short names, the `all` category), apply, strategic merge patch by merge key, the
// validation kube-apiserver makes, and delete.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type KubectlSession, kubectlSkip, startKubectlSession } from './kubectl-session.ts';

let kubectl: KubectlSession;

const WORKLOADS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: gw
          image: ghcr.io/gw-dev/gw:1
          ports: [{containerPort: 8080}, {name: admin, containerPort: 15000}]
          env: [{name: A, value: "1"}, {name: B, value: "2"}]
          readinessProbe: {httpGet: {path: /ready, port: admin}}
        - name: sidecar
          image: busybox
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-gw, namespace: team}
spec:
  selector: {matchLabels: {app: node-gw}}
  template:
    metadata: {labels: {app: node-gw}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: gw, image: ghcr.io/gw-dev/gw:1}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: web, namespace: team}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: team}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: team}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
`;

const RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: gw-proxy, namespace: team}
rules:
  - apiGroups: [gateway.networking.k8s.io]
    resources: [gateways, httproutes]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: gw-proxy, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: gw-proxy}
subjects:
  - {kind: ServiceAccount, name: web, namespace: team}
  - {kind: User, apiGroup: rbac.authorization.k8s.io, name: alice}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "gw:controller"}
rules:
  - apiGroups: [apps]
    resources: [deployments, daemonsets]
    verbs: ["*"]
  - nonResourceURLs: [/healthz]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "gw:controller"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "gw:controller"}
subjects:
  - {kind: ServiceAccount, name: gw-controller, namespace: gw-system}
`;

describe('built-in kinds through kubectl', { skip: kubectlSkip }, () => {
  before(async () => {
    kubectl = await startKubectlSession();
    await kubectl.ok('create', 'namespace', 'team');
  });
  after(async () => {
    await kubectl?.close();
  });

  test('kubectl apply creates each kind; a second apply changes nothing', async () => {
    const path = kubectl.file('workloads.yaml', WORKLOADS);
    const first = await kubectl.ok('apply', '-f', path);
    for (const line of [
      'deployment.apps/web created',
      'daemonset.apps/node-gw created',
      'serviceaccount/web created',
      'poddisruptionbudget.policy/web created',
      'horizontalpodautoscaler.autoscaling/web created',
    ])
      assert.match(first, new RegExp(`^${line.replaceAll('.', '\\.')}$`, 'm'));
    const second = await kubectl.ok('apply', '-f', path);
    assert.doesNotMatch(second, /configured|created/);
    const rbac = await kubectl.ok('apply', '-f', kubectl.file('rbac.yaml', RBAC));
    assert.match(rbac, /^role\.rbac\.authorization\.k8s\.io\/gw-proxy created$/m);
    assert.match(rbac, /^clusterrolebinding\.rbac\.authorization\.k8s\.io\/gw:controller created$/m);
  });

  test('kubectl get prints kube-apiserver columns, by short name, and `all` lists the workloads', async () => {
    assert.match(
      await kubectl.ok('get', 'deploy', '-n', 'team'),
      /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+0\/2\s+0\s+0\s+\d+s$/m,
    );
    assert.match(
      await kubectl.ok('get', 'deploy', '-n', 'team', '-o', 'wide'),
      /^web\s+0\/2\s+0\s+0\s+\d+s\s+gw,sidecar\s+ghcr\.io\/gw-dev\/gw:1,busybox\s+app=web$/m,
    );
    assert.match(
      await kubectl.ok('get', 'ds', '-n', 'team'),
      /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\nnode-gw\s+0\s+0\s+0\s+0\s+0\s+kubernetes\.io\/os=linux\s+\d+s$/m,
    );
    assert.match(await kubectl.ok('get', 'sa', '-n', 'team'), /^NAME\s+SECRETS\s+AGE\nweb\s+0\s+\d+s$/m);
    assert.match(
      await kubectl.ok('get', 'pdb', '-n', 'team'),
      /^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\nweb\s+1\s+N\/A\s+0\s+\d+s$/m,
    );
    assert.match(
      await kubectl.ok('get', 'hpa', '-n', 'team'),
      /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE\nweb\s+Deployment\/web\s+cpu: <unknown>\/80%\s+2\s+5\s+0\s+\d+s$/m,
    );
    assert.match(
      await kubectl.ok('get', 'rolebindings', '-n', 'team', '-o', 'wide'),
      /^gw-proxy\s+Role\/gw-proxy\s+\d+s\s+alice\s+team:web$/m,
    );
    assert.match(await kubectl.ok('get', 'clusterroles'), /^gw:controller\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    const all = await kubectl.ok('get', 'all', '-n', 'team');
    assert.match(all, /^deployment\.apps\/web\s/m);
    assert.match(all, /^daemonset\.apps\/node-gw\s/m);
    assert.match(all, /^horizontalpodautoscaler\.autoscaling\/web\s/m);
    assert.doesNotMatch(all, /serviceaccount|poddisruptionbudget/);
  });

  test('a status written through the status subresource is what the columns show (no kubelet here)', async () => {
    await kubectl.ok(
      'patch',
      'deployment',
      'web',
      '-n',
      'team',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"replicas":2,"readyReplicas":1,"updatedReplicas":2,"availableReplicas":1}}',
    );
    assert.match(await kubectl.ok('get', 'deploy', 'web', '-n', 'team'), /^web\s+1\/2\s+2\s+1\s+\d+s$/m);
    // A spec write keeps the status.
    await kubectl.ok('patch', 'deployment', 'web', '-n', 'team', '-p', '{"spec":{"replicas":3}}');
    assert.match(await kubectl.ok('get', 'deploy', 'web', '-n', 'team'), /^web\s+1\/3\s+2\s+1\s+\d+s$/m);
  });

  test('the scale subresource: kubectl scale writes spec.replicas, with its precondition; the Scale carries the selector', async () => {
    assert.match(
      await kubectl.ok('scale', 'deployment', 'web', '-n', 'team', '--replicas=4'),
      /deployment\.apps\/web scaled/,
    );
    const stale = await kubectl.run('scale', 'deployment', 'web', '-n', 'team', '--replicas=6', '--current-replicas=2');
    assert.notEqual(stale.code, 0);
    assert.match(stale.stderr, /Expected replicas to be 2, was 4/);
    const scale = JSON.parse(await kubectl.ok('get', '--raw', '/apis/apps/v1/namespaces/team/deployments/web/scale'));
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.apiVersion, 'autoscaling/v1');
    assert.deepEqual(scale.spec, { replicas: 4 });
    assert.deepEqual(scale.status, { replicas: 2, selector: 'app=web' });
    assert.match(await kubectl.ok('get', 'deploy', 'web', '-n', 'team'), /^web\s+1\/4\s+2\s+1\s+\d+s$/m);
  });

  test('kubectl patch merges containers by name, env by name and ports by containerPort (strategic merge)', async () => {
    await kubectl.ok(
      'patch',
      'deployment',
      'web',
      '-n',
      'team',
      '-p',
      JSON.stringify({
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'gw',
                  image: 'ghcr.io/gw-dev/gw:2',
                  env: [
                    { name: 'B', value: 'two' },
                    { name: 'C', value: '3' },
                  ],
                },
              ],
            },
          },
        },
      }),
    );
    const deployment = JSON.parse(await kubectl.ok('get', 'deployment', 'web', '-n', 'team', '-o', 'json'));
    const [gw, sidecar] = deployment.spec.template.spec.containers;
    assert.equal(gw.image, 'ghcr.io/gw-dev/gw:2');
    assert.deepEqual(
      gw.env.map((entry: { name: string; value: string }) => `${entry.name}=${entry.value}`),
      ['A=1', 'B=two', 'C=3'],
    );
    assert.deepEqual(
      gw.ports.map((port: { containerPort: number }) => port.containerPort),
      [8080, 15000],
    );
    assert.equal(sidecar.name, 'sidecar');
    assert.equal(sidecar.image, 'busybox');
    // A $patch: delete directive removes one container by its key.
    await kubectl.ok(
      'patch',
      'deployment',
      'web',
      '-n',
      'team',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}',
    );
    assert.equal(
      await kubectl.ok(
        'get',
        'deployment',
        'web',
        '-n',
        'team',
        '-o',
        'jsonpath={.spec.template.spec.containers[*].name}',
      ),
      'gw',
    );
    // Defaults as kube-apiserver fills them.
    assert.equal(deployment.spec.revisionHistoryLimit, 10);
    assert.equal(deployment.spec.progressDeadlineSeconds, 600);
    assert.equal(gw.readinessProbe.periodSeconds, 10);
    assert.equal(gw.ports[0].protocol, 'TCP');
  });

  test('kubectl apply after a change merges by the same keys (client-side apply reads the OpenAPI patch tags)', async () => {
    const changed = WORKLOADS.replace(
      'env: [{name: A, value: "1"}, {name: B, value: "2"}]',
      'env: [{name: A, value: "1"}]',
    )
      .replace('        - name: sidecar\n          image: busybox\n', '')
      .replace('minAvailable: 1', 'maxUnavailable: 25%');
    const out = await kubectl.ok('apply', '-f', kubectl.file('workloads-2.yaml', changed));
    assert.match(out, /^deployment\.apps\/web configured$/m);
    assert.match(out, /^poddisruptionbudget\.policy\/web configured$/m);
    const env = await kubectl.ok(
      'get',
      'deployment',
      'web',
      '-n',
      'team',
      '-o',
      'jsonpath={.spec.template.spec.containers[0].env[*].name}',
    );
    assert.equal(env, 'A C');
    assert.match(await kubectl.ok('get', 'pdb', 'web', '-n', 'team'), /^web\s+N\/A\s+25%\s+0\s+\d+s$/m);
  });

  test('what kube-apiserver refuses is refused, with the field path', async () => {
    const bad = await kubectl.run(
      'apply',
      '-f',
      kubectl.file(
        'bad.yaml',
        `apiVersion: apps/v1
kind: Deployment
metadata: {name: bad, namespace: team}
spec:
  selector: {matchLabels: {app: one}}
  template:
    metadata: {labels: {app: other}}
    spec:
      containers: [{name: gw, image: x}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: bad, namespace: team}
spec:
  selector: {matchLabels: {app: one}}
  template:
    metadata: {labels: {app: one}}
    spec:
      containers:
        - name: gw
          image: x
          readinessProbe: {httpGet: {port: 80}, tcpSocket: {port: 80}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: bad, namespace: team}
spec: {minAvailable: 1, maxUnavailable: 1}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: bad, namespace: team}
spec:
  scaleTargetRef: {kind: Deployment, name: web}
  minReplicas: 4
  maxReplicas: 2
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bad}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: x}
`,
      ),
    );
    assert.notEqual(bad.code, 0);
    assert.match(
      bad.stderr,
      /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/,
    );
    assert.match(
      bad.stderr,
      /readinessProbe: Invalid value: .*exactly one of exec, httpGet, tcpSocket, grpc must be set/,
    );
    assert.match(bad.stderr, /spec: Invalid value: .*at most one of minAvailable, maxUnavailable may be set/);
    assert.match(bad.stderr, /spec\.maxReplicas: Invalid value: .*must be greater than or equal to minReplicas/);
    assert.match(bad.stderr, /roleRef\.kind: Invalid value: .*can only reference a ClusterRole/);
    assert.equal((await kubectl.run('get', 'deployment', 'bad', '-n', 'team')).code, 1);
    assert.equal((await kubectl.run('get', 'daemonset', 'bad', '-n', 'team')).code, 1);
    // A workload's selector and a binding's roleRef are immutable, as in Kubernetes.
    const selector = await kubectl.run(
      'patch',
      'deployment',
      'web',
      '-n',
      'team',
      '-p',
      '{"spec":{"selector":{"matchLabels":{"app":"web","v":"2"}},"template":{"metadata":{"labels":{"v":"2"}}}}}',
    );
    assert.notEqual(selector.code, 0);
    assert.match(selector.stderr, /spec\.selector: Invalid value: .*field is immutable/);
    const roleRef = await kubectl.run(
      'patch',
      'rolebinding',
      'gw-proxy',
      '-n',
      'team',
      '--type=merge',
      '-p',
      '{"roleRef":{"name":"other"}}',
    );
    assert.notEqual(roleRef.code, 0);
    assert.match(roleRef.stderr, /roleRef: Invalid value: .*field is immutable/);
  });

  test('kubectl create of each kind through the typed clients (protobuf bodies)', async () => {
    await kubectl.ok('create', 'namespace', 'typed');
    const n = ['-n', 'typed'];
    await kubectl.ok('create', 'deployment', 'web', '--image=nginx', '--replicas=0', '--port=80', ...n);
    await kubectl.ok('create', 'serviceaccount', 'robot', ...n);
    await kubectl.ok('create', 'role', 'reader', '--verb=get,list', '--resource=deployments.apps,services', ...n);
    await kubectl.ok(
      'create',
      'rolebinding',
      'reader',
      '--role=reader',
      '--serviceaccount=typed:robot',
      '--user=alice',
      ...n,
    );
    await kubectl.ok('create', 'clusterrole', 'typed-reader', '--verb=get', '--non-resource-url=/healthz');
    await kubectl.ok('create', 'clusterrolebinding', 'typed-reader', '--clusterrole=typed-reader', '--group=devs');
    await kubectl.ok('create', 'poddisruptionbudget', 'web', '--selector=app=web', '--min-available=0', ...n);
    const deployment = JSON.parse(await kubectl.ok('get', 'deployment', 'web', '-o', 'json', ...n));
    assert.equal(deployment.spec.replicas, 0, 'a zero the client set is kept');
    assert.deepEqual(deployment.spec.selector, { matchLabels: { app: 'web' } });
    assert.deepEqual(deployment.spec.template.spec.containers, [
      {
        name: 'nginx',
        image: 'nginx',
        ports: [{ containerPort: 80, protocol: 'TCP' }],
        resources: {},
      },
    ]);
    const role = JSON.parse(await kubectl.ok('get', 'role', 'reader', '-o', 'json', ...n));
    assert.deepEqual(role.rules, [
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'list'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
    ]);
    assert.match(
      await kubectl.ok('get', 'rolebinding', 'reader', '-o', 'wide', ...n),
      /^reader\s+Role\/reader\s+\d+s\s+alice\s+typed:robot$/m,
    );
    assert.deepEqual(JSON.parse(await kubectl.ok('get', 'clusterrole', 'typed-reader', '-o', 'json')).rules, [
      { nonResourceURLs: ['/healthz'], verbs: ['get'] },
    ]);
    assert.match(await kubectl.ok('get', 'pdb', 'web', ...n), /^web\s+0\s+N\/A\s+0\s+\d+s$/m);
    await kubectl.ok('delete', 'namespace', 'typed');
    await kubectl.ok('delete', 'clusterrole/typed-reader', 'clusterrolebinding/typed-reader');
  });

  test('kubectl delete removes each kind', async () => {
    const out = await kubectl.ok('delete', '-f', kubectl.file('all.yaml', `${WORKLOADS}---\n${RBAC}`));
    assert.match(out, /deployment\.apps "web" deleted/);
    assert.match(out, /clusterrolebinding\.rbac\.authorization\.k8s\.io "gw:controller" deleted/);
    assert.equal(
      (await kubectl.ok('get', 'deploy,ds,sa,pdb,hpa,roles,rolebindings', '-n', 'team', '-o', 'name')).trim(),
      '',
    );
  });
});
