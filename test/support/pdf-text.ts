import { fileURLToPath } from 'node:url';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** The metrics of the 14 standard PDF fonts (Helvetica, …), shipped with PDF.js. */
const STANDARD_FONT_DATA = `${fileURLToPath(new URL('standard_fonts/', import.meta.resolve('pdfjs-dist/package.json')))}/`;

/**
 * The text of a PDF as Mozilla's PDF.js extracts it (the reader behind Firefox's viewer), one line per text run, so
 * tests read a generated document back the way a person's viewer would. Throws on anything that is not a PDF.
 */
export async function pdfText(bytes: Uint8Array): Promise<string> {
  // PDF.js takes ownership of (and detaches) the buffer it is given: hand it a copy.
  const loading = getDocument({ data: new Uint8Array(bytes), standardFontDataUrl: STANDARD_FONT_DATA, useSystemFonts: false });
  try {
    const document = await loading.promise;
    const lines: string[] = [];
    for (let pageNumber = 1; pageNumber <= document.numPages; pageNumber++) {
      const page = await document.getPage(pageNumber);
      const content = await page.getTextContent();
      let line = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        line += item.str;
        if (item.hasEOL) {
          lines.push(line);
          line = '';
        }
      }
      if (line !== '') lines.push(line);
    }
    return lines.join('\n');
  } finally {
    await loading.destroy();
  }
}
