/**
 * Patterns of string members that both their validation (`@Matches`) and their OpenAPI schema
 * (`pattern: X.source`) use, so generated clients refuse what the service refuses. Written
 * without the `u` flag, which a schema's pattern cannot carry.
 */

/** No control character (Unicode Cc: U+0000–U+001F, U+007F–U+009F): a name shown to people. */
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;

/** Printable ASCII without spaces, at least one: a credential or option sent in a header or a JSON body. */
export const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
