// Gateway API ReferenceGrant: the owner of a namespace consents to references into it. A grant
// lives in the namespace of the objects referred to; each `from` entry names a kind and the
// namespace it may refer from, each `to` entry a kind (and optionally one name) it may refer to.
// Entries of each list are alternatives (OR). No status: upstream has none.
import { array, named, object, refine, required } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';
import { Group, Kind, ObjectName } from '../../types/common.ts';
import { Namespace } from './shared.ts';

export const ReferenceGrantFrom = named(
  {
    name: 'ReferenceGrantFrom',
    description: 'Objects (by group, kind and namespace) allowed to refer into this namespace.',
    source: 'gateway-api',
  },
  object({
    group: required(refine(Group, { description: 'Group of the referring kind; empty for the core group.' })),
    kind: required(refine(Kind, { description: 'The referring kind (HTTPRoute, Gateway, ListenerSet, GwModel...).' })),
    namespace: required(refine(Namespace, { description: 'The namespace the references may come from.' })),
  }),
);
export type ReferenceGrantFrom = Infer<typeof ReferenceGrantFrom>;

export const ReferenceGrantTo = named(
  {
    name: 'ReferenceGrantTo',
    description: 'Objects of this namespace (by group, kind and optionally name) that may be referred to.',
    source: 'gateway-api',
  },
  object({
    group: required(refine(Group, { description: 'Group of the referred kind; empty for the core group.' })),
    kind: required(refine(Kind, { description: 'The referred kind (Service, Secret, GwBackend, HTTPRoute...).' })),
    name: refine(ObjectName, {
      description: "One object of that kind in the grant's namespace; every object of the kind when omitted.",
    }),
  }),
);
export type ReferenceGrantTo = Infer<typeof ReferenceGrantTo>;

export const ReferenceGrantSpec = named(
  {
    name: 'ReferenceGrantSpec',
    description: 'Which objects of other namespaces may refer to which objects of this namespace.',
    source: 'gateway-api',
  },
  object({
    from: required(
      array(ReferenceGrantFrom, {
        minItems: 1,
        maxItems: 16,
        listType: 'atomic',
        description: 'Who may refer into this namespace; any entry suffices.',
      }),
    ),
    to: required(
      array(ReferenceGrantTo, {
        minItems: 1,
        maxItems: 16,
        listType: 'atomic',
        description: 'What they may refer to, in this namespace; any entry suffices.',
      }),
    ),
  }),
);
export type ReferenceGrantSpec = Infer<typeof ReferenceGrantSpec>;
