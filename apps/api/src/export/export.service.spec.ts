import { AppConfig, AppError } from '@app/common';
import { AuditTrail, DatabaseLocator, EventExportRepository } from '@app/database';
import { ExportQueryDto } from './dto/export-query.dto';
import { ExportService } from './export.service';
import { ExportSlots } from './export-slots';
import { BoundedReads } from '../reads/bounded-reads';

describe('ExportService', () => {
  it('gives its export slot back when the account has no read slot left (429)', async () => {
    const release = jest.fn();
    const refusal = new AppError('RATE_LIMITED', 'no read slot', { limit: 1 });
    const slots = { take: jest.fn(() => ({ release })) } as unknown as ExportSlots;
    const reads = {
      take: jest.fn(() => {
        throw refusal;
      }),
      translated: (error: unknown) => error,
    } as unknown as BoundedReads;
    const sut = new ExportService(
      {} as EventExportRepository,
      { dataDir: '/nonexistent' } as AppConfig,
      {} as DatabaseLocator,
      slots,
      {} as AuditTrail,
      reads,
    );
    await expect(sut.export('acc_1', {} as ExportQueryDto, 'key_1')).rejects.toBe(refusal);
    expect(release).toHaveBeenCalledTimes(1);
  });
});
