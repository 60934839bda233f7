import { v7 as uuidv7, validate as uuidValidate } from 'uuid';

/** Every row id is a UUIDv7: globally unique and ordered by creation time, so primary keys index in insert order. */
export function newId(): string {
  return uuidv7();
}

/** True for any RFC 9562 uuid (v1–v8) in its canonical form: 36 characters, lower case, as ids are stored. */
export function isUuid(value: string): boolean {
  return value.length === 36 && value === value.toLowerCase() && uuidValidate(value);
}
