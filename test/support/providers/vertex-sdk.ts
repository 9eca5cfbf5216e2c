// @google/genai's client in Vertex AI mode pointed at the Gemini stand-in (gemini-mock.ts with
// `vertex`), holding a fixed access token: how the Vertex tests prove the stand-in's wire format.
import { GoogleGenAI, type GoogleGenAIOptions } from '@google/genai';
import { fixedAccessToken } from '../../helpers/google-stand-ins.ts';

type VertexAuthClient = NonNullable<GoogleGenAIOptions['googleAuthOptions']>['authClient'];

/** The SDK in Vertex mode for `project` and `location` at `url`, sending `token`. */
export function vertexClient(url: string, project: string, location: string, token: string): GoogleGenAI {
  return new GoogleGenAI({
    vertexai: true,
    project,
    location,
    // fixedAccessToken is the top-level google-auth-library's client; the SDK bundles its own copy.
    googleAuthOptions: { authClient: fixedAccessToken(token) as unknown as VertexAuthClient },
    httpOptions: { baseUrl: url, apiVersion: 'v1' },
  });
}
