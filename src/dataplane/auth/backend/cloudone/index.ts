// Backend authentication cloudone (AWS; spec document 2, CloudoneAuth; document 1, Authentication
// rule 7): every request to the backend is signed with SigV4 once it is final. Credentials come
// from a Secret, the AWS SDK's default chain, or STS AssumeRole on top of it; the service and
// region are the spec's, else derived (defaults.ts). docs/backend-auth.md, "cloudone (AWS)".
import type { CloudoneAuth } from '../../../../api/types/backend-auth.ts';
import { BackendCredentialError } from '../credential-error.ts';
import { AuthConfigError } from '../errors.ts';
import type { AuthIncoming, CredentialKindCompiler, OutgoingRequest } from '../kind.ts';
import { type CompiledAssumeRole, compileAssumeRole, RoleSessions } from './assume-role.ts';
import { AmbientCredentials, CLOUDONE_FAILURE, failureText } from './credentials.ts';
import { type RegionSource, signingRegion, signingService } from './defaults.ts';
import { secretCredentials } from './secret.ts';
import { type AwsCredentials, Sigv4Signer } from './sign.ts';

type Pending<T> = T | Promise<T>;

function then<T, U>(value: Pending<T>, next: (resolved: T) => Pending<U>): Pending<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** The region of a RegionSource: the fixed one, else the SDK's, found once (a failure is retried on the next request). */
function regionOf(source: RegionSource): () => Pending<string> {
  if ('fixed' in source) return () => source.fixed;
  let known: string | undefined;
  let pending: Promise<string> | undefined;
  return () => {
    if (known !== undefined) return known;
    pending ??= source.ambient().then(
      (region) => {
        known = region;
        return region;
      },
      (error) => {
        pending = undefined;
        throw new BackendCredentialError(
          502,
          CLOUDONE_FAILURE,
          `no AWS signing region (set cloudone.region or AWS_REGION): ${failureText(error)}`,
        );
      },
    );
    return pending;
  };
}

/** The state of one cloudone credential kept across configurations: caches and signers. */
interface CloudoneState {
  region: () => Pending<string>;
  /** The default chain's credentials: signed with, or the source of assumed roles (none with a Secret). */
  ambient: AmbientCredentials | undefined;
  roles: RoleSessions | undefined;
  /** One signer per credential: the SDK's signer keeps the derived key. */
  signers: WeakMap<AwsCredentials, Sigv4Signer>;
}

export const compileCloudone: CredentialKindCompiler<CloudoneAuth> = (config, context) => {
  // The signature is the credential: there is nothing to place elsewhere.
  if (context.location !== undefined)
    return new AuthConfigError(
      'location',
      'cloudone signs the request (Authorization and X-Amz-* headers); remove location',
    );
  // Refused by the API already (assumeRole starts from the ambient credentials); a stored object may predate it.
  if (config.secretRef !== undefined && config.assumeRole !== undefined)
    return new AuthConfigError('cloudone.assumeRole', 'secretRef and assumeRole may not both be set');
  const service = signingService(config, context.target);
  if (service instanceof AuthConfigError) return service;
  const regionSource = signingRegion(config, context.target);
  if (regionSource instanceof AuthConfigError) return regionSource;
  let secret: AwsCredentials | undefined;
  if (config.secretRef !== undefined) {
    const read = secretCredentials(config.secretRef, context.data, context.namespace);
    if (read instanceof AuthConfigError) return read;
    secret = read;
  }
  let assumeRole: CompiledAssumeRole | undefined;
  if (config.assumeRole !== undefined) {
    const compiled = compileAssumeRole(config.assumeRole);
    if (compiled instanceof AuthConfigError) return compiled;
    assumeRole = compiled;
  }

  const identity = [
    JSON.stringify(config),
    service,
    'fixed' in regionSource ? regionSource.fixed : '',
    secret?.accessKeyId ?? '',
    secret?.secretAccessKey ?? '',
    secret?.sessionToken ?? '',
  ];
  const clock = context.clock;
  const state = context.shared<CloudoneState>('cloudone', identity, () => {
    const region = regionOf(regionSource);
    const ambient = secret === undefined ? new AmbientCredentials(clock) : undefined;
    return {
      region,
      ambient,
      roles: assumeRole && ambient && new RoleSessions(assumeRole.roleArn, ambient, region, clock),
      signers: new WeakMap(),
    };
  });

  const signer = (credentials: AwsCredentials): Pending<Sigv4Signer> => {
    const known = state.signers.get(credentials);
    if (known !== undefined) return known;
    return then(state.region(), (region) => {
      const made = new Sigv4Signer(credentials, service, region, clock);
      state.signers.set(credentials, made);
      return made;
    });
  };
  const credentials: (incoming: AuthIncoming) => Pending<AwsCredentials> =
    secret !== undefined
      ? () => secret
      : assumeRole !== undefined
        ? (incoming) => state.roles!.get(assumeRole.session(incoming))
        : () => state.ambient!.get();

  // Keys from a Secret with a known region (the usual case): one signer, chosen once.
  if (secret !== undefined && 'fixed' in regionSource) {
    const fixed = signer(secret) as Sigv4Signer;
    return { sign: (request: OutgoingRequest) => fixed.sign(request) };
  }
  return {
    sign: (request: OutgoingRequest, incoming: AuthIncoming) =>
      then(then(credentials(incoming), signer), (chosen) => chosen.sign(request)),
  };
};
