// Where a managed guard service is reached (decision 0028): its public URL unless the first set
// variable of the vendor's convention names another; a URL's path is kept as a prefix; a value
// that is not an http(s) URL (or carries credentials, a query or a fragment) is a problem naming
// the variable, never a silent fallback to the public endpoint.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceEndpoint } from '../../../src/dataplane/upstream/service-endpoint.ts';

const PUBLIC = 'https://bedrock-runtime.eu-west-1.amazonaws.com';
const VARIABLES = ['AWS_ENDPOINT_URL_BEDROCK_RUNTIME', 'AWS_ENDPOINT_URL'];

describe('guard service endpoints', () => {
  it('the public endpoint when no variable is set (or set empty)', () => {
    assert.deepEqual(serviceEndpoint(PUBLIC, VARIABLES, { AWS_ENDPOINT_URL: ' ' }), {
      destination: { protocol: 'https:', host: 'bedrock-runtime.eu-west-1.amazonaws.com', port: 443 },
      basePath: '',
      variable: undefined,
    });
  });

  it('the first variable set wins; its path is a prefix, its port or the scheme default', () => {
    const env = { AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'http://[::1]:8080/proxy/bedrock/', AWS_ENDPOINT_URL: 'https://x' };
    assert.deepEqual(serviceEndpoint(PUBLIC, VARIABLES, env), {
      destination: { protocol: 'http:', host: '::1', port: 8080 },
      basePath: '/proxy/bedrock',
      variable: 'AWS_ENDPOINT_URL_BEDROCK_RUNTIME',
    });
    assert.deepEqual(serviceEndpoint(PUBLIC, VARIABLES, { AWS_ENDPOINT_URL: 'https://vpce-1.example.com' }), {
      destination: { protocol: 'https:', host: 'vpce-1.example.com', port: 443 },
      basePath: '',
      variable: 'AWS_ENDPOINT_URL',
    });
  });

  it('a value that is no usable URL is a problem naming the variable', () => {
    for (const value of [
      'bedrock.local:443',
      'ftp://host',
      'https://user:pw@host',
      'https://host/?a=1',
      'https://host/#x',
    ])
      assert.deepEqual(serviceEndpoint(PUBLIC, VARIABLES, { AWS_ENDPOINT_URL: value }), {
        variable: 'AWS_ENDPOINT_URL',
        message: `AWS_ENDPOINT_URL in gw's environment must be an http or https URL without credentials, query or fragment, such as ${PUBLIC}; fix or unset it.`,
      });
  });
});
