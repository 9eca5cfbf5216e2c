// The AWS SDK packages cloudone uses besides its own signer, loaded on first use: a gateway without
// AWS credentials does not carry them (docs/benchmarks.md, "Memory").
import type * as Sts from '@aws-sdk/client-sts';
import type * as CredentialProviders from '@aws-sdk/credential-providers';
import { loadOnFirstUse } from '../../../../util/load-on-first-use.ts';

/** The STS client package: AssumeRole, and the SDK's region resolution. */
export const sts = loadOnFirstUse<typeof Sts>('@aws-sdk/client-sts');

/** The SDK's credential providers: the default chain of ambient credentials. */
export const credentialProviders = loadOnFirstUse<typeof CredentialProviders>('@aws-sdk/credential-providers');
