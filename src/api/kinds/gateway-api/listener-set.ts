// Gateway API ListenerSet: listeners added to a Gateway from outside it (the Gateway must allow
// them through spec.allowedListeners).
import { array, named, object, refine, required } from '../../schema/build.ts';
import type { Infer } from '../../schema/schema.ts';
import {
  conditions,
  ListenerEntry,
  ListenerEntryStatus,
  listenerListRules,
  ParentGatewayReference,
  pendingConditions,
} from './shared.ts';

export const ListenerSetSpec = named(
  { name: 'ListenerSetSpec', source: 'gateway-api' },
  object({
    parentRef: required(refine(ParentGatewayReference, { description: 'The Gateway the listeners are added to.' })),
    listeners: required(
      array(ListenerEntry, {
        minItems: 1,
        maxItems: 64,
        listType: 'map',
        listMapKeys: ['name'],
        rules: listenerListRules,
      }),
    ),
  }),
);
export type ListenerSetSpec = Infer<typeof ListenerSetSpec>;

export const ListenerSetStatus = named(
  {
    name: 'ListenerSetStatus',
    source: 'gateway-api',
    notes: 'Condition types: Accepted (Accepted, NotAllowed, ParentNotAccepted, ListenersNotValid) and Programmed.',
  },
  object({
    conditions: refine(conditions(), { default: pendingConditions(['Accepted', 'Programmed']) }),
    listeners: array(ListenerEntryStatus, { maxItems: 64, listType: 'map', listMapKeys: ['name'] }),
  }),
);
export type ListenerSetStatus = Infer<typeof ListenerSetStatus>;
