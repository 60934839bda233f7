import type { FastifyReply } from 'fastify';

/** A file an operation answers for download: its name as the browser saves it, and its bytes or text. */
export interface DownloadedFile {
  filename: string;
  content: Buffer | string;
}

/**
 * Answers `file` as a download of `type`: saved under its name, and kept by no cache on the way (it holds an
 * organization's data: invoices, reports, exports).
 */
export function sendDownload(reply: FastifyReply, type: string, file: DownloadedFile): FastifyReply {
  return reply.type(type).header('content-disposition', `attachment; filename="${file.filename}"`).header('cache-control', 'private, no-store').send(file.content);
}
