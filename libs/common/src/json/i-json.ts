import { createScanner, SyntaxKind } from 'jsonc-parser';
import { AppError } from '../errors';

/**
 * Parses a request body as I-JSON (RFC 7493, contract §8): valid JSON, no object with two members
 * of the same name at any depth, no `__proto__` member (it cannot be stored as a plain key), and no
 * deeper than `maxDepth` levels. Every other member name is kept exactly as sent. Throws
 * 400 VALIDATION_ERROR naming the offending member by its path (`context.items[2].k`).
 *
 * JSON.parse checks the syntax (V8's parser is iterative: any depth is safe). It cannot see
 * duplicates (the last one wins), so a second pass walks the tokens of jsonc-parser's scanner,
 * which decodes escapes the way JSON.parse does ("k" and "\u006b" are one name), with an explicit
 * stack: no recursion, whatever the depth.
 */
export function parseIJson(text: string, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw AppError.validation(
      [{ field: 'body', message: 'body is not valid JSON' }],
      'The request body is not valid JSON.',
    );
  }
  checkMembers(text, maxDepth);
  return value;
}

interface Container {
  /** Member names seen so far; null for an array. */
  names: Set<string> | null;
  path: string;
  /** The current member's name, or the current item's index. */
  at: string | number;
}

function checkMembers(text: string, maxDepth: number): void {
  const scanner = createScanner(text, true);
  const stack: Container[] = [];
  let expectName = false;
  const pathOfChild = (): string => {
    const parent = stack[stack.length - 1];
    if (!parent) return '';
    if (parent.names === null) return `${parent.path}[${parent.at}]`;
    return parent.path ? `${parent.path}.${parent.at}` : String(parent.at);
  };
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    const container = stack[stack.length - 1];
    if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) {
      if (stack.length >= maxDepth) {
        throw AppError.validation([{ field: 'body', message: `body is nested deeper than ${maxDepth} levels` }]);
      }
      const isObject = token === SyntaxKind.OpenBraceToken;
      stack.push({ names: isObject ? new Set() : null, path: pathOfChild(), at: isObject ? '' : 0 });
      expectName = isObject;
    } else if (token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken) {
      stack.pop();
      expectName = false;
    } else if (token === SyntaxKind.CommaToken && container) {
      if (container.names === null) container.at = (container.at as number) + 1;
      expectName = container.names !== null;
    } else if (token === SyntaxKind.StringLiteral && expectName && container?.names) {
      const name = scanner.getTokenValue();
      container.at = name;
      if (name === '__proto__') {
        throw AppError.validation([{ field: pathOfChild(), message: "keys named '__proto__' are not accepted" }]);
      }
      if (container.names.has(name)) {
        throw AppError.validation([{ field: pathOfChild(), message: `duplicate member name '${name}'` }]);
      }
      container.names.add(name);
      expectName = false;
    }
  }
}
