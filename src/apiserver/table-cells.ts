// The cells of Table responses: a column's definition with the function that renders its cell,
// and the renderings kube-apiserver's printers share (ages, label sets, counts).
import type { KubeObject } from '../api/validate/admission.ts';
import { isPlainObject } from '../util/values.ts';

export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface Column extends TableColumn {
  cell: (object: KubeObject, now: number) => unknown;
}

/** Kubernetes' duration.HumanDuration: "42s", "5m3s", "3h10m", "2d5h", "3y20d". */
export function humanDuration(milliseconds: number): string {
  const seconds = Math.floor(milliseconds / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8)
    return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

export function age(timestamp: unknown, now: number): unknown {
  if (typeof timestamp !== 'string') return '<unknown>';
  const time = Date.parse(timestamp);
  return Number.isNaN(time) ? '<invalid>' : humanDuration(now - time);
}

export function column(name: string, cell: Column['cell'], priority = 0): Column {
  return { name, type: 'string', format: '', description: '', priority, cell };
}

export function integerColumn(name: string, cell: Column['cell'], priority = 0): Column {
  return { ...column(name, cell, priority), type: 'integer' };
}

/** The Age column of every kind: the time since metadata.creationTimestamp. */
export const ageColumn: Column = {
  ...column('Age', (object, now) => age(object.metadata.creationTimestamp, now)),
  type: 'date',
  description: 'The time since the object was created.',
};

export function keyCount(...maps: unknown[]): number {
  return maps.reduce<number>((sum, map) => sum + (isPlainObject(map) ? Object.keys(map).length : 0), 0);
}

/** A label set as kubectl prints it: k=v,k2=v2, or <none>. */
export function labelsText(labels: unknown): string {
  if (!isPlainObject(labels) || Object.keys(labels).length === 0) return '<none>';
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}
