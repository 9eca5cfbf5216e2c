// Access log export over OTLP (Frontend.accessLog.otlp): each request's entry as an OTLP log
// record whose attributes are the access log fields. The export has its own filter and
// attributes, or the access log's when it sets none.
import { type Logger, SeverityNumber } from '@opentelemetry/api-logs';
import type { AccessLog, OtlpAccessLog } from '../../../api/types/observability.ts';
import type { ResolvedEndpoint } from '../../policies/endpoint.ts';
import { AccessLogger, accessLogMessage } from '../access-log.ts';
import type { CelVariables } from '../cel-context.ts';
import type { RequestRecord } from '../request-record.ts';
import type { OtlpExporters } from './exporters.ts';

type AttributeValue = string | number | boolean;

export class OtlpAccessLogExport {
  readonly problems: readonly string[];
  readonly exporterKey: string;
  private readonly logger: Logger;
  private readonly entry: AccessLogger;

  constructor(config: OtlpAccessLog, parent: AccessLog, endpoint: ResolvedEndpoint, exporters: OtlpExporters) {
    const { key, provider } = exporters.logs({
      endpoint,
      protocol: config.protocol ?? 'GRPC',
      path: config.path ?? '/v1/logs',
    });
    this.exporterKey = key;
    this.logger = provider.getLogger('gw.access');
    this.entry = new AccessLogger(
      { filter: config.filter ?? parent.filter, attributes: config.attributes ?? parent.attributes },
      { write: () => undefined },
    );
    this.problems = this.entry.problems.map((problem) => `OTLP ${problem}`);
  }

  get usesCel(): boolean {
    return this.entry.usesCel;
  }

  /** Queues the request's entry for export (the SDK batches and sends it). */
  export(record: RequestRecord, variables: CelVariables | undefined): void {
    const fields = this.entry.attributes(record, variables);
    if (fields === undefined) return;
    const attributes: Record<string, AttributeValue> = {};
    for (const [name, value] of Object.entries(fields)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        attributes[name] = value;
      else if (value !== null && value !== undefined) attributes[name] = JSON.stringify(value);
    }
    this.logger.emit({
      timestamp: Date.now(),
      severityNumber: SeverityNumber.INFO,
      severityText: 'INFO',
      // The access log line's message: the same text in both places.
      body: accessLogMessage(record),
      attributes,
    });
  }
}
