import { findPage } from './routes'
import { needsLogin } from './whitelist'

export { needsLogin }

const otherTitles: Record<string, string> = { '/gpt': '对话改写' }

/** The title of the page at `path`, if it has one. */
export function pageTitleOf(path: string): string | undefined {
  const pathname = path.split(/[?#]/)[0]
  return findPage(pathname).page?.meta.title ?? otherTitles[pathname]
}

/** What the login dialog says when a visitor asks for a page that needs an account. */
export function loginReason(path: string): string {
  const title = pageTitleOf(path)
  return title ? `请先登录后使用 ${title}` : '请先登录后继续'
}

/** An in-app path that is safe to continue to after login (no other origin). */
export function safeRedirect(target: string | null | undefined): string | undefined {
  return target && target.startsWith('/') && !target.startsWith('//') && !target.startsWith('/\\') ? target : undefined
}
