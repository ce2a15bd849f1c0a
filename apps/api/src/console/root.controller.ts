import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '@app/auth';

/**
 * The service's root, for a person who opens the address the start-up names (issue 40 item 8): `GET /`
 * goes to the console, and `GET /favicon.ico` (asked by browsers of any page without an icon of its
 * own, the JSON answers included) to the console's icon. Not part of the API.
 */
@ApiExcludeController()
@Public()
@Controller()
export class RootController {
  @Get()
  root(@Res() res: Response): void {
    res.redirect(302, '/console');
  }

  @Get('favicon.ico')
  favicon(@Res() res: Response): void {
    res.redirect(301, '/console/favicon.svg');
  }
}
