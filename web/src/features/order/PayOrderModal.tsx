import { Alert, Button, Descriptions, Modal, Result, Spin } from 'antd'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { useNavigate } from 'react-router'
import { checkPaid, loadOrder, phonePayUrl } from './api'
import { channelLabels, type Order } from './types'
import { formatFen } from '../../utils/format'

/** How often a pending order is asked about while its QR code is shown. */
export const ORDER_POLL_MS = 2000

function useQrImage(text: string | null | undefined) {
  const [image, setImage] = useState<string | null>(null)
  useEffect(() => {
    let live = true
    if (!text) return
    void import('qrcode').then(({ default: QRCode }) =>
      QRCode.toDataURL(text, { width: 240, margin: 2, errorCorrectionLevel: 'M' }).then((url) => {
        if (live) setImage(url)
      }),
    )
    return () => {
      live = false
    }
  }, [text])
  return text ? image : null
}

function useSecondsLeft(until: number | undefined) {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000)
    return () => window.clearInterval(timer)
  }, [])
  return until ? Math.max(0, Math.floor((until - now) / 1000)) : 0
}

function granted(order: Order): string {
  if (order.kind === 'package') return `${order.grantLabel ?? order.title}（${order.grantDays} 天内有效）`
  if (order.kind === 'task') return `补足余额 ${formatFen(order.creditFen)}，用于支付该任务`
  if (order.creditFen > order.amountFen) return `余额 ${formatFen(order.creditFen)}（含赠送 ${formatFen(order.creditFen - order.amountFen)}）`
  return `余额 ${formatFen(order.creditFen)}`
}

/** Shows an order's QR code (or, for an order made on a phone, the button to the provider's payment page) with its
 * amount and countdown, and follows it until it is paid. */
/** How long a provider's phone payment address is used before a fresh one is asked for (WeChat Pay's lasts 5 min). */
const PHONE_URL_FRESH_MS = 4 * 60_000

export default function PayOrderModal({
  order,
  onPhone = false,
  returnUrl = '/order/account',
  onClose,
  onPaid,
}: {
  order: Order | null
  onPhone?: boolean
  returnUrl?: string
  onClose: () => void
  onPaid?: () => void
}) {
  const navigate = useNavigate()
  const queryClient = useQueryClient()
  const followed = useQuery({
    queryKey: ['order', order?.id],
    queryFn: () => loadOrder(order?.id ?? 0),
    enabled: order !== null,
    refetchInterval: (q) => (q.state.data && q.state.data.status !== 'pending' ? false : ORDER_POLL_MS),
    initialData: order ?? undefined,
  })
  const current = followed.data ?? order
  const qr = useQrImage(current?.status === 'pending' && !onPhone ? current.payUrl : null)
  const left = useSecondsLeft(current?.expiresAt)
  const paid = current?.status === 'paid'
  const [handedOver, setHandedOver] = useState(false)
  const [checking, setChecking] = useState(false)
  useEffect(() => {
    if (!paid) return
    void queryClient.invalidateQueries({ queryKey: ['account'] })
    if (onPaid && !handedOver) {
      setHandedOver(true)
      onPaid()
    }
  }, [paid, queryClient, onPaid, handedOver])
  if (!current) return null
  const channel = channelLabels[current.channel]
  const expired = current.status === 'closed' || (current.status === 'pending' && left === 0)
  return (
    <Modal open title={onPhone ? channel : `${channel}扫码支付`} onCancel={onClose} footer={null} destroyOnHidden width={420}>
      {current.sandbox && <Alert className="mb" type="warning" showIcon title="支付沙箱：模拟的微信支付 / 支付宝，不会产生真实扣款" data-testid="sandbox-banner" />}
      {paid ? (
        <Result
          status="success"
          title="支付成功"
          subTitle={current.kind === 'task' ? `已到账：${granted(current)}。任务随即用余额提交；即使关闭了页面，也会在付款后自动开始` : `已到账：${granted(current)}`}
          extra={[
            <Button key="account" type="primary" onClick={() => navigate('/order/account')} data-testid="order-go-account">
              查看账户
            </Button>,
            <Button key="close" onClick={onClose}>
              关闭
            </Button>,
          ]}
        />
      ) : expired ? (
        <Result status="warning" title="订单已过期" subTitle="该订单未在有效期内支付，已关闭；请重新下单。" extra={<Button onClick={onClose}>关闭</Button>} />
      ) : (
        <div className="pay-qr">
          <Descriptions column={1} size="small">
            <Descriptions.Item label="商品">{current.title}</Descriptions.Item>
            <Descriptions.Item label="应付金额">
              <strong className="pay-amount" data-testid="order-amount">{formatFen(current.amountFen)}</strong>
            </Descriptions.Item>
            <Descriptions.Item label="到账">{granted(current)}</Descriptions.Item>
            <Descriptions.Item label="订单号">{current.outTradeNo}</Descriptions.Item>
          </Descriptions>
          {onPhone ? (
            <>
              <Button
                className="mt"
                type="primary"
                size="large"
                block
                disabled={!current.payUrl}
                onClick={() => {
                  const go = (url?: string | null) => {
                    if (url) window.location.href = url
                  }
                  if (Date.now() - current.createdAt < PHONE_URL_FRESH_MS) go(current.payUrl)
                  else void phonePayUrl(current.id, returnUrl).then((fresh) => go(fresh.payUrl))
                }}
                data-testid="order-open-provider"
              >
                前往{channel}付款
              </Button>
              <div className="muted mt">
                将打开{channel}的付款页面，付款后会回到本站。剩余 {Math.floor(left / 60)} 分 {String(left % 60).padStart(2, '0')} 秒
              </div>
            </>
          ) : (
            <>
              <div className="pay-qr-image">{qr ? <img src={qr} alt={`${channel}付款二维码`} width={240} height={240} data-testid="order-qr" /> : <Spin />}</div>
              <div className="muted">
                请使用{current.channel === 'wechat' ? '微信' : '支付宝'}扫一扫完成支付，剩余 {Math.floor(left / 60)} 分 {String(left % 60).padStart(2, '0')} 秒
              </div>
              {current.channel === 'alipay' && (
                <Button
                  type="link"
                  onClick={() => void phonePayUrl(current.id, returnUrl, true).then((web) => web.payUrl && window.open(web.payUrl, '_blank', 'noopener'))}
                  data-testid="order-alipay-web"
                >
                  手机不在身边？用支付宝网页版付款
                </Button>
              )}
            </>
          )}
          <div className="muted mt">支付完成后本页面会自动更新，请勿重复支付。</div>
          <Button
            className="mt"
            loading={checking}
            onClick={() => {
              setChecking(true)
              void checkPaid(current.id)
                .then(() => followed.refetch())
                .catch(() => undefined)
                .finally(() => setChecking(false))
            }}
            data-testid="order-check-paid"
          >
            我已支付，立即查询
          </Button>
        </div>
      )}
    </Modal>
  )
}
