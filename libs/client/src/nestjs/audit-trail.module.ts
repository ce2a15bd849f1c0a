import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { AuditTrailClient, Recorder } from '@audit-trail/client';
import { AuditedInterceptor } from './audited.interceptor';
import { AUDIT_TRAIL_OPTIONS, AuditTrailModuleOptions } from './options';

/** Closes the recorder when the application shuts down (enableShutdownHooks: SIGTERM), sending what it can in time. */
@Injectable()
class RecorderShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(Recorder) private readonly recorder: Recorder,
    @Inject(AUDIT_TRAIL_OPTIONS) private readonly options: AuditTrailModuleOptions,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.recorder.close({ timeoutMs: this.options.shutdownTimeoutMs ?? 10_000 });
  }
}

/**
 * The client for a NestJS application (docs/contract.md §20): `AuditTrailModule.forRoot({ baseUrl,
 * apiKey })` provides AuditTrailClient and a durable Recorder (spool `./audit-spool` unless told
 * otherwise) to every module, and @Audited(...) records through it.
 */
@Module({})
export class AuditTrailModule {
  static forRoot(options: AuditTrailModuleOptions): DynamicModule {
    return {
      module: AuditTrailModule,
      global: true,
      providers: [
        { provide: AUDIT_TRAIL_OPTIONS, useValue: options },
        { provide: AuditTrailClient, useFactory: () => new AuditTrailClient(options) },
        {
          provide: Recorder,
          inject: [AuditTrailClient],
          useFactory: async (client: AuditTrailClient) => {
            const { spoolDir = './audit-spool', ...rest } = options.recorder ?? {};
            const recorder = client.recorder({ ...rest, ...(spoolDir === null ? {} : { spoolDir }) });
            await recorder.ready();
            return recorder;
          },
        },
        AuditedInterceptor,
        RecorderShutdown,
      ],
      exports: [AUDIT_TRAIL_OPTIONS, AuditTrailClient, Recorder, AuditedInterceptor],
    };
  }
}
