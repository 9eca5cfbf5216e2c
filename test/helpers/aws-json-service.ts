// What the loopback stand-ins of AWS JSON services (Bedrock Runtime's ApplyGuardrail, Bedrock
// Agent Runtime's Rerank) share: an error written as AWS writes it ({"message"}, the type in
// x-amzn-errortype), and the SigV4 check a request passes before anything else, which refuses
// with AWS's InvalidSignatureException and records why.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Verified, type VerifyOptions, verifySigv4 } from './sigv4.ts';

/** Answers an AWS JSON-protocol error of `type` (ValidationException, AccessDeniedException...). */
export function sendAwsError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
  });
  res.end(JSON.stringify({ message }));
}

/**
 * The signature of `req` (whose body was read as `body`) verified, or undefined once the request
 * has been answered 403 InvalidSignatureException and the reason pushed onto `refused`.
 */
export function verifiedOrRefused(
  req: IncomingMessage,
  body: string,
  options: VerifyOptions,
  res: ServerResponse,
  refused: string[],
): Verified | undefined {
  try {
    return verifySigv4(
      { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.from(body, 'utf8') },
      options,
    );
  } catch (error) {
    refused.push((error as Error).message);
    sendAwsError(
      res,
      403,
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided.',
    );
    return undefined;
  }
}
