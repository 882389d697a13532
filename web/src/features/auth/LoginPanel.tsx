import { lazy, Suspense, useState } from 'react'
import { Alert, Button, Form, Input, Spin } from 'antd'
import { LockOutlined, ReloadOutlined, UserOutlined } from '@ant-design/icons'
import { Link } from 'react-router'
import { useQrLogin } from './useQrLogin'
import { useUserStore } from '../../stores/user'
import { useSubmit } from '../../utils/useSubmit'
import { capsLockOn, PASSWORD_RULE } from '../../utils/validate'
import { toastSuccess } from '../../utils/feedback'
import { useIsPhone } from '../../utils/useMediaQuery'
import { confirmPasswordRules, newPasswordRules, newUsernameRules } from './rules'
import { zhCN } from '../../locales/zh-CN'
import TextLink from '../../components/TextLink'
import type { LoginTab } from './LoginTabs'

// Tabs only on phone-sized screens: desktops show both halves side by side.
const LoginTabs = lazy(() => import('./LoginTabs'))

interface Props {
  /** Whether the panel is on screen: QR polling runs only then. */
  active: boolean
  onSuccess: () => void
  /** Shows the dismiss link (dialog only). */
  onDismiss?: () => void
  /** Why the user is asked to log in, e.g. 请先登录后使用 AIGC检测. */
  reason?: string
}

/**
 * QR login beside the password / register form; used by the login dialog and the /login page.
 * On a phone-sized screen the two are tabs and password login comes first: a QR code shown on
 * the phone itself cannot be scanned by it.
 */
export default function LoginPanel({ active, onSuccess, onDismiss, reason }: Props) {
  const acceptToken = useUserStore((s) => s.acceptToken)
  const phone = useIsPhone()
  const [tab, setTab] = useState<LoginTab>('password')
  const { qr, refresh } = useQrLogin(active && (!phone || tab === 'qr'), (token) => {
    acceptToken(token)
    toastSuccess('扫码登录成功')
    onSuccess()
  })
  const [mode, setMode] = useState<'login' | 'register'>('login')

  const qrBlock = (
    <div className="login-qr">
      <div className="login-qr-title">手机扫码登录</div>
      <div
        className="login-qr-box"
        role="button"
        tabIndex={0}
        title="点击刷新二维码"
        onClick={() => void refresh()}
        onKeyDown={(e) => e.key === 'Enter' && void refresh()}
      >
        {qr ? (
          <img src={qr.dataUrl} width={300} height={300} alt="登录二维码" data-testid="login-qr" />
        ) : (
          <Spin />
        )}
        {qr?.stale && (
          <div className="login-qr-stale">
            <div>二维码已失效</div>
            <div>点击刷新</div>
          </div>
        )}
      </div>
      <div className="login-qr-hint">
        用手机相机或浏览器扫码，在手机上确认登录
        <Button type="link" size="small" icon={<ReloadOutlined />} onClick={() => void refresh()}>
          刷新二维码
        </Button>
      </div>
      <div className="login-qr-gift">首次扫码登录赠送 1 次免费查重（同一网络每天限 1 次）</div>
    </div>
  )
  const formBlock = (
    <div className="login-form">
      {mode === 'login' ? (
        <PasswordForm onSuccess={onSuccess} onRegister={() => setMode('register')} />
      ) : (
        <RegisterForm onSuccess={onSuccess} onLogin={() => setMode('login')} />
      )}
      {onDismiss && (
        <div className="login-dismiss">
          <TextLink onClick={onDismiss}>{zhCN.dismissLogin}</TextLink>
        </div>
      )}
    </div>
  )

  return (
    <>
      {reason && <Alert className="login-reason" type="warning" showIcon title={reason} data-testid="login-reason" />}
      {phone ? (
        <Suspense fallback={<Spin className="page-spin" />}>
          <LoginTabs tab={tab} onChange={setTab} form={formBlock} qr={qrBlock} />
        </Suspense>
      ) : (
        <div className="login-panel">
          {qrBlock}
          {formBlock}
        </div>
      )}
    </>
  )
}

function CapsLockHint({ on }: { on: boolean }) {
  return on ? <div className="caps-hint">大写锁定已开启</div> : null
}

function PasswordForm({ onSuccess, onRegister }: { onSuccess: () => void; onRegister: () => void }) {
  const login = useUserStore((s) => s.loginWithPassword)
  const [caps, setCaps] = useState(false)
  const [loading, submit] = useSubmit(async (values: { username: string; password: string }) => {
    await login(values.username.trim(), values.password)
    toastSuccess('登录成功')
    onSuccess()
  })

  return (
    <>
      <div className="login-form-title">账号密码登录</div>
      <Form layout="vertical" onFinish={submit} requiredMark={false} name="login">
        <Form.Item
          name="username"
          validateTrigger="onBlur"
          rules={[{ required: true, whitespace: true, message: '请输入用户名' }]}
        >
          <Input prefix={<UserOutlined />} placeholder="用户名" autoComplete="username" size="large" />
        </Form.Item>
        <Form.Item name="password" validateTrigger="onBlur" rules={[{ required: true, message: '请输入密码' }]}>
          <Input.Password
            prefix={<LockOutlined />}
            placeholder="密码"
            autoComplete="current-password"
            size="large"
            onKeyUp={(e) => setCaps(capsLockOn(e))}
            onBlur={() => setCaps(false)}
          />
        </Form.Item>
        <CapsLockHint on={caps} />
        <Button type="primary" htmlType="submit" block size="large" loading={loading}>
          登录
        </Button>
      </Form>
      <div className="login-links">
        <span>
          还没有账号？<TextLink onClick={onRegister}>立即注册</TextLink>
        </span>
        <Link to="/forgot-password">忘记密码？</Link>
      </div>
    </>
  )
}

function RegisterForm({ onSuccess, onLogin }: { onSuccess: () => void; onLogin: () => void }) {
  const register = useUserStore((s) => s.registerAccount)
  const [loading, submit] = useSubmit(async (values: { username: string; password: string }) => {
    await register(values.username.trim(), values.password)
    toastSuccess('注册成功，已为您登录')
    onSuccess()
  })

  return (
    <>
      <div className="login-form-title">注册新账号</div>
      <Form layout="vertical" onFinish={submit} requiredMark={false} name="register">
        <Form.Item name="username" validateTrigger="onBlur" rules={newUsernameRules}>
          <Input prefix={<UserOutlined />} placeholder="用户名（4–32 个字符）" autoComplete="username" size="large" />
        </Form.Item>
        <Form.Item
          name="password"
          dependencies={['username']}
          validateTrigger="onBlur"
          rules={newPasswordRules({ usernameField: 'username' })}
          extra={PASSWORD_RULE}
        >
          <Input.Password prefix={<LockOutlined />} placeholder="密码（至少 8 位，含字母和数字）" autoComplete="new-password" size="large" />
        </Form.Item>
        <Form.Item name="confirm" dependencies={['password']} validateTrigger="onBlur" rules={confirmPasswordRules()}>
          <Input.Password prefix={<LockOutlined />} placeholder="确认密码" autoComplete="new-password" size="large" />
        </Form.Item>
        <Button type="primary" htmlType="submit" block size="large" loading={loading}>
          注册并登录
        </Button>
      </Form>
      <div className="login-links">
        <span>
          已有账号？<TextLink onClick={onLogin}>去登录</TextLink>
        </span>
      </div>
    </>
  )
}
