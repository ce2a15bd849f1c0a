import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller';
import { ConsoleFiles } from './console-files';

/** GET /console and /console/*: the web console built into dist/console (docs/architecture.md, "The console"). */
@Module({ controllers: [ConsoleController], providers: [ConsoleFiles] })
export class ConsoleModule {}
