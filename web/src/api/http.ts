// JSON over HTTP to the server's /api; every failure becomes an ApiError with the server's words.

import { type Problem, errorBodyOf } from '../protocol';

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problems: Problem[] = [],
    /** What is wrong with each field of a form (an app's inputs), by its name. */
    readonly fields: Record<string, string> = {},
  ) {
    super(message);
  }
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (error) {
    throw new ApiError(0, 'offline', `the server cannot be reached (${(error as Error).message})`);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) throw refusal(response, data, `${method} ${path}`);
  return data as T;
}

/** The error a refused request throws: the server's code, message, problems and fields. */
export function refusal(response: Response, data: unknown, what: string): ApiError {
  const error = errorBodyOf(data);
  return new ApiError(
    response.status,
    error?.code ?? 'internal',
    error?.message ?? `${what}: ${response.status} ${response.statusText}`,
    error?.problems ?? [],
    error?.fields ?? {},
  );
}

export const encodePath = (path: string): string => path.split('/').map(encodeURIComponent).join('/');
