import { lazy, Suspense } from 'react'
import { Modal, Spin } from 'antd'
import { useLocation } from 'react-router'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useUserStore } from '../../stores/user'
import { router } from '../../router'

// The forms and the QR code load with the dialog's first opening, not with the shell.
const LoginPanel = lazy(() => import('./LoginPanel'))

/**
 * The login dialog: shown on load without a token, whenever the server says "not logged in", and
 * when a visitor asks for a page that needs an account (with the reason, then on to that page).
 */
export default function LoginDialog() {
  const { visible, reason, redirect, close } = useLoginDialogStore()
  const token = useUserStore((s) => s.token)
  const location = useLocation()
  const open = visible && !token && location.pathname !== '/login'

  return (
    <Modal open={open} onCancel={close} footer={null} width={780} centered destroyOnHidden title="登录文鉴">
      <Suspense fallback={<Spin className="page-spin" />}>
        <LoginPanel
          active={open}
          reason={reason}
          onDismiss={close}
          onSuccess={() => {
            close()
            // Continue to the page the user asked for; either way the guard loads the user's info.
            if (redirect) void router.navigate(redirect)
            else void router.revalidate()
          }}
        />
      </Suspense>
    </Modal>
  )
}
