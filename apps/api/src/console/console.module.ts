import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller';
import { ConsoleFiles } from './console-files';
import { RootController } from './root.controller';

/**
 * GET /console and /console/*: the web console built into dist/console (docs/architecture.md, "The console");
 * GET / and /favicon.ico lead there.
 */
@Module({ controllers: [ConsoleController, RootController], providers: [ConsoleFiles] })
export class ConsoleModule {}
