// Models: per listener and route, what model discovery (GET /v1/models) lists there and every
// model it serves — a concrete model's live health score and eviction (with the time until it is
// restored), a virtual model's routing and each target's health, an `ai` GwBackend's priority
// groups — as the data plane keeps them (each worker its own with --workers N; asked of the
// workers as the metrics are).
import { json, type UiEndpoint } from './endpoint.ts';

export const modelsEndpoint: UiEndpoint = {
  method: 'GET',
  path: '/ui/api/models',
  handle: async ({ sources }) => json({ processes: await sources.healthReports() }),
};
