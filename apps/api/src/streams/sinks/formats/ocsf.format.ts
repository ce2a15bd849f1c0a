import type { EventView } from '../../../events/dto/event.view';

/** OCSF API Activity (class 6003, category 6 Application Activity), OCSF 1.x. */
export const OCSF_CLASS_UID = 6003;
const OCSF_CATEGORY_UID = 6;
const OCSF_VERSION = '1.1.0';

const ACTIVITIES: Record<string, [id: number, name: string]> = {
  create: [1, 'Create'],
  created: [1, 'Create'],
  read: [2, 'Read'],
  update: [3, 'Update'],
  updated: [3, 'Update'],
  delete: [4, 'Delete'],
  deleted: [4, 'Delete'],
};
const OTHER: [number, string] = [99, 'Other'];

/** activity_id from an action's last dot-separated word (docs/contract.md §16): create/read/update/delete and -d forms, else 99. */
export function ocsfActivity(action: string): [id: number, name: string] {
  const word = action.slice(action.lastIndexOf('.') + 1).toLowerCase();
  return Object.hasOwn(ACTIVITIES, word) ? (ACTIVITIES[word] as [number, string]) : OTHER;
}

/** The OCSF object of one event: the fields docs/contract.md §16 maps, and the classification OCSF requires. */
export interface OcsfApiActivity {
  class_uid: number;
  category_uid: number;
  activity_id: number;
  activity_name: string;
  type_uid: number;
  severity_id: number;
  time: number;
  /** Required by the class; an erased actor (docs/contract.md §17) is a user without a name. */
  actor: { user: { name?: string } };
  api: { operation: string };
  resources?: { uid: string }[];
  metadata: { uid: string; version: string; product: { name: string } };
  unmapped: {
    context: Record<string, unknown> | null;
    audit: { hash: string; previousHash: string; chain: { id: string; name: string; position: number } };
  };
}

/** `ocsf`: one event as OCSF API Activity, as docs/contract.md §16 lists it. */
export function toOcsf(event: EventView): OcsfApiActivity {
  const [activityId, activityName] = ocsfActivity(event.action);
  return {
    class_uid: OCSF_CLASS_UID,
    category_uid: OCSF_CATEGORY_UID,
    activity_id: activityId,
    activity_name: activityName,
    type_uid: OCSF_CLASS_UID * 100 + activityId,
    severity_id: 1, // Informational
    time: Date.parse(event.timestamp),
    actor: { user: event.actor === null ? {} : { name: event.actor } },
    api: { operation: event.action },
    ...(event.resource === null ? {} : { resources: [{ uid: event.resource }] }),
    metadata: { uid: event.id, version: OCSF_VERSION, product: { name: 'audit-trail' } },
    unmapped: {
      context: event.context,
      audit: { hash: event.hash, previousHash: event.previousHash, chain: { ...event.chain } },
    },
  };
}
