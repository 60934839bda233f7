import { STATUS_CODES } from 'node:http';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** The one error body of DESIGN.md §4. */
export interface ErrorBody {
  status: number;
  error: string;
  message: string;
  request_id: string;
  details?: { field: string; message: string }[];
}

const ERROR_BODY_KEYS = ['status', 'error', 'message', 'request_id', 'details'];

/**
 * Asserts an error answer: the status, JSON, exactly the error body's fields (status and its reason phrase, a
 * non-empty message, the request id of the X-Request-Id header, details as field/message pairs), no stack trace.
 */
export function expectErrorBody(response: LightMyRequestResponse, status: number): ErrorBody {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json<ErrorBody>();
  for (const key of Object.keys(body)) expect(ERROR_BODY_KEYS).toContain(key);
  expect(body.status).toBe(status);
  expect(body.error).toBe(STATUS_CODES[status]);
  expect(typeof body.message).toBe('string');
  expect(body.message).not.toBe('');
  expect(body.request_id).toBe(response.headers['x-request-id']);
  expect(response.body).not.toMatch(/\bstack\b|\n\s+at /);
  if (body.details !== undefined) {
    expect(Array.isArray(body.details)).toBe(true);
    for (const detail of body.details) expect(Object.keys(detail).sort()).toEqual(['field', 'message']);
  }
  return body;
}
