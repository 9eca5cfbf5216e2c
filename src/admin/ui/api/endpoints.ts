// Every endpoint of the UI's JSON API. A new concept is one file beside this one and one line here.
import type { UiEndpoint } from './endpoint.ts';
import { modelsEndpoint } from './models.ts';
import { objectEndpoints } from './objects.ts';
import { overviewEndpoint } from './overview.ts';
import { policiesEndpoint } from './policies.ts';
import { explainEndpoint, routesEndpoint } from './routes.ts';
import { sessionEndpoints } from './session.ts';

export const ENDPOINTS: readonly UiEndpoint[] = [
  ...sessionEndpoints,
  overviewEndpoint,
  routesEndpoint,
  explainEndpoint,
  modelsEndpoint,
  policiesEndpoint,
  ...objectEndpoints,
];
