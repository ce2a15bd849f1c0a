import { Module } from '@nestjs/common';
import { ShutdownService } from './shutdown.service';

/** The process's stop (graceful shutdown); readiness asks it whether a stop has begun. */
@Module({ providers: [ShutdownService], exports: [ShutdownService] })
export class LifecycleModule {}
