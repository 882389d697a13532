import { Modal } from 'antd'
import { useLocation } from 'react-router'
import LoginPanel from './LoginPanel'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useUserStore } from '../../stores/user'
import { router } from '../../router'

/** The login dialog: shown on load without a token, and whenever the server says "not logged in". */
export default function LoginDialog() {
  const visible = useLoginDialogStore((s) => s.visible)
  const close = useLoginDialogStore((s) => s.close)
  const token = useUserStore((s) => s.token)
  const location = useLocation()
  const open = visible && !token && location.pathname !== '/login'

  return (
    <Modal open={open} onCancel={close} footer={null} width={780} centered destroyOnHidden title="登录文鉴">
      <LoginPanel
        active={open}
        onDismiss={close}
        onSuccess={() => {
          close()
          // Re-run the guard: it loads the user's info.
          void router.revalidate()
        }}
      />
    </Modal>
  )
}
