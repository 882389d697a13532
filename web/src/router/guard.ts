import { redirect, type LoaderFunctionArgs } from 'react-router'
import { getToken } from '../utils/auth'
import { toastError } from '../utils/feedback'
import { useUserStore } from '../stores/user'
import { usePermissionStore } from '../stores/permission'
import { needsLogin } from './whitelist'
import { zhCN } from '../locales/zh-CN'

/**
 * The navigation guard of spec §2, run before every navigation (the root route's loader):
 * - with a token, /login goes to /; user info is fetched once and routes generated; if that
 *   fails the token is cleared, the message shown ('Has Error' as fallback) and the user sent
 *   to /login?redirect=…;
 * - without a token, whitelisted paths proceed as an anonymous user, others go to /login?redirect=….
 *   (In-app clicks on such paths never get here: the shell's blocker opens the login dialog
 *   instead, see `useLoginBlocker`; this branch serves typed-in addresses and reloads.)
 */
export async function guardLoader({ request }: LoaderFunctionArgs) {
  const path = new URL(request.url).pathname
  const user = useUserStore.getState()
  if (getToken()) {
    if (path === '/login') return redirect('/')
    if (user.roles.length > 0 && !user.anonymous) return null
    try {
      const info = await user.getInfo()
      usePermissionStore.getState().generateRoutes(info.roles, info.operator)
      return null
    } catch (e) {
      useUserStore.getState().resetToken()
      toastError((e as Error)?.message || zhCN.hasError)
      return redirect(`/login?redirect=${path}`)
    }
  }
  if (!needsLogin(path)) {
    if (!user.anonymous) {
      user.becomeAnonymous()
      usePermissionStore.getState().generateRoutes(['admin'])
    }
    return null
  }
  return redirect(`/login?redirect=${path}`)
}
