import { Injectable, Logger, OnModuleInit, StreamableFile } from '@nestjs/common';
import { pipeline, Readable } from 'node:stream';
import { AppConfig, AppError, EXPORT_LIMIT } from '@app/common';
import {
  AuditTrail,
  DatabaseLocator,
  EventExportRepository,
  EventSecretsRecord,
  EventSnapshot,
  keyActor,
} from '@app/database';
import { HashingV2, hashingOf } from '@app/hashing';
import type { ExportedPrunedChain } from '@app/verification';
import { ExportQueryDto } from './dto/export-query.dto';
import { toEventFields } from '../events/event.mapper';
import { exportPeriod, ExportPeriod, fileStamp } from './export-period';
import { ExportSlot, ExportSlots } from './export-slots';
import { ExportSpool } from './export-spool';
import { csvExport } from './formats/csv-export.format';
import { ExportFormat, ExportHeader } from './formats/export-format';
import { jsonExport } from './formats/json-export.format';
import { SnapshotRows } from './snapshot-rows';
import { ExportStalledError, StallGuard } from './stall-guard';
import { toEventFilters } from '../events/event-filters';
import { BoundedReads } from '../reads/bounded-reads';
import { Slot } from '../common/account-slots';

const FORMATS: Record<ExportQueryDto['format'], ExportFormat> = { csv: csvExport, json: jsonExport };

@Injectable()
export class ExportService implements OnModuleInit {
  private readonly logger = new Logger('Export');
  private readonly spool: ExportSpool;

  constructor(
    private readonly events: EventExportRepository,
    private readonly config: AppConfig,
    private readonly database: DatabaseLocator,
    private readonly slots: ExportSlots,
    private readonly audit: AuditTrail,
    private readonly reads: BoundedReads,
  ) {
    this.spool = new ExportSpool(config.dataDir);
  }

  onModuleInit(): void {
    if (this.oneConnection) this.spool.clear();
  }

  /**
   * Counts and streams inside one read-only snapshot, so the header's count is the number of
   * rows sent. Over the limit, the 422 leaves before any byte of the file. The export holds one
   * of ExportSlots' slots and one of BoundedReads' (429 when either has none left) until its
   * stream closes, however it ends: it is a read over many events for as long as it sends.
   * Each of its statements runs under QUERY_TIMEOUT_SECONDS (EventSnapshot): a count cancelled
   * past it is 422 QUERY_TOO_EXPENSIVE; a cursor fetch cancelled mid-file cuts the file.
   */
  async export(accountId: string, query: ExportQueryDto, keyId: string, requestId?: string): Promise<StreamableFile> {
    const slots: Slot[] = [];
    try {
      // One at a time: a refusal of the second must find the first in `slots`, to give it back.
      slots.push(this.slots.take(accountId));
      slots.push(this.reads.take(accountId));
      const slot = { release: () => slots.forEach((s) => s.release()) };
      return this.file(query, await this.body(accountId, query, keyId, requestId), slot, requestId);
    } catch (error) {
      for (const slot of slots) slot.release();
      throw this.reads.translated(error);
    }
  }

  /** The file's bytes: from the snapshot as the client takes them, or from the spool (one connection). */
  private async body(accountId: string, query: ExportQueryDto, keyId: string, requestId?: string): Promise<Readable> {
    const period = exportPeriod(query.after, query.before);
    const snapshot = await this.events.openSnapshot(accountId, toEventFilters(query, period), this.reads.timeoutMs);
    let count: number;
    let pruned: ExportedPrunedChain[];
    let hashing: Record<string, HashingV2> = {};
    try {
      count = await snapshot.countUpTo(EXPORT_LIMIT + 1);
      if (count > EXPORT_LIMIT) {
        throw new AppError(
          'EXPORT_LIMIT_EXCEEDED',
          `More than ${EXPORT_LIMIT} events match; narrow the period or add filters.`,
          { limit: EXPORT_LIMIT },
        );
      }
      pruned = await snapshot.pruned(accountId, query.chain_id ?? null);
      // A JSON export names each version-2 event's salts and commitments in its header (docs/contract.md §17).
      if (query.format === 'json') hashing = hashingById(await snapshot.secrets());
      await snapshot.openCursor();
    } catch (error) {
      await snapshot.close();
      throw error;
    }
    const header = {
      ...this.header(query, period, count, pruned),
      ...(Object.keys(hashing).length > 0 && { hashing }),
    };
    const text = this.text(snapshot, FORMATS[query.format], header, requestId);
    const body = this.oneConnection ? await this.spool.spool(text) : text;
    await this.recordExport(accountId, keyId, query, period, body);
    return body;
  }

  /**
   * `export.created` in the account's `_audit` chain (docs/contract.md §12), once the export is sure to be
   * sent and its snapshot taken, so the file does not hold its own record: on PostgreSQL in a
   * transaction of its own beside the open snapshot; on the embedded database (one connection)
   * after the snapshot was spooled and closed. If it cannot be recorded, nothing is sent.
   */
  private async recordExport(
    accountId: string,
    keyId: string,
    query: ExportQueryDto,
    period: ExportPeriod,
    body: Readable,
  ): Promise<void> {
    const { format, period: asked, filters } = this.header(query, period, 0, []);
    const context = { format, ...asked, filters };
    try {
      await this.audit.recordAlone(accountId, [
        { actor: keyActor(keyId), action: 'export.created', resource: null, context },
      ]);
    } catch (error) {
      body.destroy();
      throw error;
    }
  }

  /** The last stage cuts a stalled client (docs/contract.md §8); the slot is given back when it closes. */
  private file(query: ExportQueryDto, body: Readable, slot: ExportSlot, requestId?: string): StreamableFile {
    const format = FORMATS[query.format];
    const period = exportPeriod(query.after, query.before);
    const guard = new StallGuard(this.config.exportStallTimeoutSeconds, (stalled) =>
      this.logger.warn({ msg: stalled.message, reqId: requestId }),
    );
    const guarded = pipeline(body, guard, () => undefined); // failures: streamFailed; a stall: the guard's callback
    guarded.once('close', () => slot.release());
    return new StreamableFile(guarded, {
      type: format.contentType,
      disposition: `attachment; filename="audit-export-${fileStamp(period.after)}-${fileStamp(period.before)}.${format.extension}"`,
    }).setErrorLogger(() => undefined); // logged where detected; the socket is cut, leaving the file unfinished
  }

  /**
   * With a pool of one connection (the embedded database), a snapshot held while a client reads
   * would stop every append: the file is spooled to DATA_DIR at database speed first (ExportSpool).
   */
  private get oneConnection(): boolean {
    return this.database.settings.poolSize === 1;
  }

  private header(
    query: ExportQueryDto,
    period: ExportPeriod,
    count: number,
    pruned: ExportedPrunedChain[],
  ): ExportHeader {
    return {
      format: query.format,
      generatedAt: new Date().toISOString(),
      period: { after: period.after.toISOString(), before: period.before.toISOString() },
      filters: {
        actor: query.actor ?? null,
        action: query.action ?? null,
        resource: query.resource ?? null,
        chain_id: query.chain_id ?? null,
        q: query.q ?? null,
      },
      count,
      ...(pruned.length > 0 ? { pruned } : {}),
    };
  }

  /** rows -> records -> text; destroying the returned stream (client gone, stalled) closes the snapshot. */
  private text(snapshot: EventSnapshot, format: ExportFormat, header: ExportHeader, requestId?: string): Readable {
    const rows = new SnapshotRows(snapshot, (event) => format.toRecord(toEventFields(event)));
    return pipeline(rows, format.encoder(header), (error) => this.streamFailed(error, requestId));
  }

  /** Logged once, here; a stall (logged where it is detected) or a client gone is no failure. */
  private streamFailed(error: NodeJS.ErrnoException | null, requestId?: string): void {
    if (!error || error.code === 'ERR_STREAM_PREMATURE_CLOSE' || error instanceof ExportStalledError) return;
    this.logger.error({ msg: 'Export stream failed', reqId: requestId, err: error });
  }
}

/** `export.hashing`: each version-2 event's `hashing` by its id. */
function hashingById(events: readonly EventSecretsRecord[]): Record<string, HashingV2> {
  const byId: Record<string, HashingV2> = {};
  for (const event of events) {
    const hashing = hashingOf(event);
    if (hashing !== null) byId[event.id] = hashing;
  }
  return byId;
}
