// The client side of the MCP OAuth tests: an OAuthClientProvider (the MCP SDK's interface) for the
// client_credentials grant that registers itself at whatever registration endpoint discovery
// finds. Given to the SDK's auth() or to StreamableHTTPClientTransport as `authProvider`, it lets
// the SDK run the whole flow: the 401, the metadata, Dynamic Client Registration, the token.
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** An MCP client for the client_credentials grant that registers itself under `name`. */
export class ServiceClient implements OAuthClientProvider {
  private readonly name: string;
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  constructor(name: string) {
    this.name = name;
  }
  get redirectUrl(): undefined {
    return undefined;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [],
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(): never {
    throw new Error('client_credentials needs no browser');
  }
  saveCodeVerifier() {}
  codeVerifier(): never {
    throw new Error('client_credentials has no code verifier');
  }
  prepareTokenRequest() {
    return new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp' });
  }
}

/** The claims of a JWT (its payload, not verified). */
export function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
