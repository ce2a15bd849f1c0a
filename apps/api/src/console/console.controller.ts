import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '@app/auth';
import { sameOriginCsp } from '../common/content-security-policy';
import { ConsoleFiles } from './console-files';

/**
 * The web console's static files (docs/contract.md §15): no key (the person pastes theirs into the page),
 * a Content-Security-Policy that allows this origin only and no inline script or style. Not part
 * of the API, so not in the OpenAPI description.
 */
export const CONSOLE_CSP = sameOriginCsp();

@ApiExcludeController()
@Public()
@Controller('console')
export class ConsoleController {
  constructor(private readonly files: ConsoleFiles) {}

  @Get()
  index(@Req() req: Request, @Res() res: Response): void {
    this.serve(req, res);
  }

  @Get('*path')
  file(@Req() req: Request, @Res() res: Response): void {
    this.serve(req, res);
  }

  /** One path per route, not an array: route tables elsewhere read a handler's path as a string. */
  private serve(req: Request, res: Response): void {
    res
      .setHeader('Content-Security-Policy', CONSOLE_CSP)
      .sendFile(this.files.resolve(req.path.slice('/console'.length)));
  }
}
