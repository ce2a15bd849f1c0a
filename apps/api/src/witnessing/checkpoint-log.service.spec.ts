import { AppConfig } from '@app/common';
import { CheckpointLogService } from './checkpoint-log.service';

describe('CheckpointLogService', () => {
  const start = (origin: string) =>
    new CheckpointLogService(
      Object.assign(new AppConfig(), { checkpointLogOrigin: origin }),
      null as never,
      null as never,
      null as never,
    );

  it('refuses an origin that reads as a chain checkpoint’s (same key: a log checkpoint must not pass for one)', () => {
    expect(() => start('audit-trail/chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X')).toThrow(/CHECKPOINT_LOG_ORIGIN/);
    expect(() => start('audit-trail/checkpoint-log')).not.toThrow();
    expect(() => start('example.com/audit-log')).not.toThrow();
  });
});
