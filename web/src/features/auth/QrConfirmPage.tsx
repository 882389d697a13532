import { useCallback, useEffect, useState } from 'react'
import { useParams } from 'react-router'
import { Alert, Button, Form, Input, Result, Spin, Typography } from 'antd'
import { confirmQr, getInfo, getQrInfo, type QrInfo, type UserInfo } from '../../api/user'
import { useUserStore } from '../../stores/user'
import { getToken } from '../../utils/auth'
import { useSubmit } from '../../utils/useSubmit'
import { formatDateTime } from '../../utils/format'
import { toastSuccess } from '../../utils/feedback'
import { PASSWORD_RULE } from '../../utils/validate'
import { confirmPasswordRules, newPasswordRules, newUsernameRules } from './rules'
import type { ApiError } from '../../api/client'

function describeAgent(agent: string): string {
  const browser = /Edg\//.test(agent)
    ? 'Edge'
    : /Chrome\//.test(agent)
      ? 'Chrome'
      : /Firefox\//.test(agent)
        ? 'Firefox'
        : /Safari\//.test(agent)
          ? 'Safari'
          : '浏览器'
  const os = /Windows/.test(agent) ? 'Windows' : /Mac OS X/.test(agent) ? 'macOS' : /Linux/.test(agent) ? 'Linux' : ''
  return os ? `${os} 上的 ${browser}` : browser
}

/** /m/qr/:id — opened on a phone by scanning the desktop's QR code. */
export default function QrConfirmPage() {
  const { id = '' } = useParams()
  const [qr, setQr] = useState<QrInfo | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [me, setMe] = useState<UserInfo | null>(null)
  const [checkingMe, setCheckingMe] = useState(Boolean(getToken()))
  const [done, setDone] = useState(false)
  const [mode, setMode] = useState<'login' | 'register'>('login')
  const { loginWithPassword, registerAccount, resetToken } = useUserStore()

  useEffect(() => {
    document.title = '扫码登录确认 - 文鉴'
    getQrInfo(id)
      .then(setQr)
      .catch((e: ApiError) => setLoadError(e.message))
  }, [id])

  const loadMe = useCallback(async () => {
    if (!getToken()) return
    setCheckingMe(true)
    try {
      setMe(await getInfo())
    } catch {
      resetToken()
      setMe(null)
    } finally {
      setCheckingMe(false)
    }
  }, [resetToken])

  useEffect(() => {
    void loadMe()
  }, [loadMe])

  const [confirming, confirm] = useSubmit(async () => {
    try {
      await confirmQr(id)
      setDone(true)
    } finally {
      // Whatever happened, show the QR's current state.
      getQrInfo(id).then(setQr).catch(() => {})
    }
  })

  const [submitting, signIn] = useSubmit(async (values: { username: string; password: string }) => {
    if (mode === 'login') await loginWithPassword(values.username.trim(), values.password)
    else await registerAccount(values.username.trim(), values.password)
    toastSuccess(mode === 'login' ? '登录成功' : '注册成功，已为您登录')
    await loadMe()
  })

  let body
  if (loadError) {
    body = <Result status="warning" title="无法确认登录" subTitle={loadError} />
  } else if (!qr) {
    body = <Spin />
  } else if (done) {
    body = <Result status="success" title="已确认登录" subTitle="请回到电脑上继续使用文鉴。" />
  } else if (qr.status === 'expired') {
    body = <Result status="warning" title="二维码已过期" subTitle="请在电脑上刷新二维码后重新扫码。" />
  } else if (qr.status !== 'pending') {
    body = <Result status="info" title="该二维码已使用" subTitle="如需再次登录，请在电脑上刷新二维码。" />
  } else {
    body = (
      <>
        <Alert
          type="info"
          showIcon
          title="您正在登录文鉴网页版"
          description={
            <div className="qr-request">
              <div>设备：{describeAgent(qr.requesterAgent)}</div>
              <div>IP 地址：{qr.requesterIp || '未知'}</div>
              <div>请求时间：{formatDateTime(qr.createdAt)}</div>
              <div>有效期至：{formatDateTime(qr.expiresAt)}</div>
            </div>
          }
        />
        <Typography.Paragraph type="secondary" className="qr-warning">
          确认后，这台电脑将登录您的账号。如果不是您本人操作，请不要确认。
        </Typography.Paragraph>
        {checkingMe ? (
          <Spin />
        ) : me ? (
          <div className="qr-confirm-box">
            <div className="qr-account">
              当前账号：<b>{me.loginName}</b>（ID {me.id}）
            </div>
            <Button type="primary" size="large" block loading={confirming} onClick={() => void confirm(undefined)}>
              确认登录
            </Button>
            <Button
              size="large"
              block
              onClick={() => {
                resetToken()
                setMe(null)
              }}
            >
              切换账号
            </Button>
          </div>
        ) : (
          <div className="qr-confirm-box">
            <div className="qr-account">{mode === 'login' ? '请先登录您的账号' : '创建新账号'}</div>
            <Form layout="vertical" onFinish={signIn} requiredMark={false} key={mode} name="qr-login">
              <Form.Item
                name="username"
                validateTrigger="onBlur"
                rules={mode === 'login' ? [{ required: true, whitespace: true, message: '请输入用户名' }] : newUsernameRules}
              >
                <Input placeholder={mode === 'login' ? '用户名' : '用户名（4–32 个字符）'} size="large" autoComplete="username" />
              </Form.Item>
              <Form.Item
                name="password"
                dependencies={mode === 'register' ? ['username'] : undefined}
                validateTrigger="onBlur"
                rules={mode === 'login' ? [{ required: true, message: '请输入密码' }] : newPasswordRules({ usernameField: 'username' })}
                extra={mode === 'register' ? PASSWORD_RULE : undefined}
              >
                <Input.Password
                  placeholder={mode === 'login' ? '密码' : '密码（至少 8 位，含字母和数字）'}
                  size="large"
                  autoComplete={mode === 'login' ? 'current-password' : 'new-password'}
                />
              </Form.Item>
              {mode === 'register' && (
                <Form.Item name="confirm" dependencies={['password']} validateTrigger="onBlur" rules={confirmPasswordRules()}>
                  <Input.Password placeholder="确认密码" size="large" autoComplete="new-password" />
                </Form.Item>
              )}
              <Button type="primary" htmlType="submit" size="large" block loading={submitting}>
                {mode === 'login' ? '登录' : '注册'}
              </Button>
            </Form>
            <div className="login-links">
              {mode === 'login' ? (
                <span>
                  还没有账号？<Typography.Link onClick={() => setMode('register')}>立即注册</Typography.Link>
                </span>
              ) : (
                <span>
                  已有账号？<Typography.Link onClick={() => setMode('login')}>去登录</Typography.Link>
                </span>
              )}
            </div>
          </div>
        )}
      </>
    )
  }

  return (
    <div className="qr-page">
      <div className="qr-page-brand">文鉴 · 扫码登录</div>
      <div className="qr-page-body">{body}</div>
    </div>
  )
}
