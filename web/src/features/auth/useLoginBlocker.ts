import { useEffect } from 'react'
import { useBlocker } from 'react-router'
import { getToken } from '../../utils/auth'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { loginReason, needsLogin } from '../../router/access'

/**
 * A visitor's in-app navigation (menu, search, links, cards) to a page that needs an account does
 * not leave the current page for a bare /login: the login dialog opens, saying why, and once the
 * user has logged in the app continues to that page. Typed-in addresses and reloads still meet
 * the navigation guard, which sends them to /login?redirect=… (spec §2).
 */
export function useLoginBlocker() {
  const blocker = useBlocker(({ nextLocation }) => !getToken() && needsLogin(nextLocation.pathname))
  useEffect(() => {
    if (blocker.state !== 'blocked') return
    const { pathname, search, hash } = blocker.location
    useLoginDialogStore.getState().open({ reason: loginReason(pathname), redirect: `${pathname}${search}${hash}` })
    blocker.reset()
  }, [blocker])
}
