import { DynamicModule, ForwardReference, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';

type Import = Type | DynamicModule | ForwardReference | Promise<DynamicModule>;

/**
 * The controllers of a module and of every module it imports, read from their @Module() metadata
 * without starting anything (so a suite can make its cases from them when jest collects it).
 * Modules imported as promises (async dynamic modules) are not followed: a suite that uses this
 * checks the list against the running app's.
 */
export function controllersOf(root: Type): Set<Type> {
  const controllers = new Set<Type>();
  const seen = new Set<unknown>();
  const visit = (entry: Import | undefined): void => {
    if (entry === undefined || entry instanceof Promise) return;
    const module = 'forwardRef' in entry ? (entry.forwardRef() as Type) : entry;
    if (seen.has(module)) return;
    seen.add(module);
    const dynamic = 'module' in module ? module : undefined;
    const type = dynamic ? dynamic.module : (module as Type);
    const declared = (key: string) => (Reflect.getMetadata(key, type) as unknown[] | undefined) ?? [];
    for (const controller of [...declared(MODULE_METADATA.CONTROLLERS), ...(dynamic?.controllers ?? [])]) {
      controllers.add(controller as Type);
    }
    for (const imported of [...declared(MODULE_METADATA.IMPORTS), ...(dynamic?.imports ?? [])])
      visit(imported as Import);
  };
  visit(root);
  return controllers;
}
