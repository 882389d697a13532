import { ApiError, send, SendError } from './client'

/** A paper as the upload forms send it: a file, or pasted text. */
export interface PaperSource {
  file?: File
  text?: string
  title?: string
  author?: string
}

/** The request body for an upload (multipart) or pasted text (JSON). */
export function paperBody(source: PaperSource) {
  if (!source.file) return { data: { text: source.text ?? '', title: source.title ?? '', author: source.author ?? '' } }
  const form = new FormData()
  form.append('file', source.file)
  form.append('title', source.title ?? '')
  form.append('author', source.author ?? '')
  return { data: form }
}

/** Fetches a file through the authenticated client and saves it as `fileName`. */
/** The UTF-8 file name a Content-Disposition header gives (`filename*=UTF-8''…`), if any. */
export function attachmentName(disposition: unknown): string | null {
  if (typeof disposition !== 'string') return null
  const match = /filename\*=UTF-8''([^;]+)/i.exec(disposition)
  if (!match) return null
  try {
    return decodeURIComponent(match[1])
  } catch {
    return null
  }
}

/** Fetches an attachment: its bytes and the server's own file name when it sends one, else `fileName`. */
export async function fetchAttachment(url: string, params: Record<string, unknown>, fileName: string, method: 'get' | 'post' = 'get') {
  try {
    const reply = await send({ url, method, params, responseType: 'blob', timeout: 120000 })
    return { data: reply.data as Blob, fileName: attachmentName(reply.headers.get('content-disposition')) ?? fileName }
  } catch (e) {
    // Errors come back as JSON: surface the server's Chinese message.
    const reply = e instanceof SendError ? e.reply : undefined
    const parsed = reply && typeof reply.data === 'object' ? (reply.data as { message?: string; error?: string } | null) : null
    throw new ApiError(reply?.status ?? 0, parsed?.error ?? 'download_failed', parsed?.message ?? '报告下载失败，请稍后重试')
  }
}

/** Saves an attachment under the server's own file name when it sends one (the rewritten Word file keeps the upload's name), else `fileName`. */
export async function downloadAttachment(url: string, params: Record<string, unknown>, fileName: string, method: 'get' | 'post' = 'get') {
  const { data, fileName: name } = await fetchAttachment(url, params, fileName, method)
  const href = URL.createObjectURL(data)
  const a = document.createElement('a')
  a.href = href
  a.download = name
  a.click()
  URL.revokeObjectURL(href)
}
