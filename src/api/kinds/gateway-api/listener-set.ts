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
  {
    name: 'ListenerSetSpec',
    description: 'The parent Gateway and the listeners this ListenerSet adds to it.',
    source: 'gateway-api',
  },
  object({
    parentRef: required(refine(ParentGatewayReference, { description: 'The Gateway the listeners are added to.' })),
    listeners: required(
      array(ListenerEntry, {
        minItems: 1,
        description: 'Listeners added to the parent Gateway.',
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
    description: 'State of the ListenerSet and of each of its listeners.',
    source: 'gateway-api',
    notes: 'Condition types: Accepted (Accepted, NotAllowed, ParentNotAccepted, ListenersNotValid) and Programmed.',
  },
  object({
    conditions: refine(conditions(), { default: pendingConditions(['Accepted', 'Programmed']) }),
    listeners: array(ListenerEntryStatus, {
      maxItems: 64,
      listType: 'map',
      listMapKeys: ['name'],
      description: 'State of each listener, by name.',
    }),
  }),
);
export type ListenerSetStatus = Infer<typeof ListenerSetStatus>;
