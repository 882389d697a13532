import { Alert, Radio } from 'antd'
import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { createOrder, paymentOptions } from './api'
import PayOrderModal from './PayOrderModal'
import { channelLabels, type Channel, type Order, type OrderRequest } from './types'
import { useSubmit } from '../../utils/useSubmit'
import { useIsPhone } from '../../utils/useMediaQuery'

/** What the order pages and the task price dialogs share: the payment options, the channel choice, placing an
 * order and its QR dialog; `onPaid` runs once when the order is paid (a task's dialog submits the task then). */
export function usePurchase(onPaid?: () => void) {
  const options = useQuery({ queryKey: ['payment-options'], queryFn: paymentOptions })
  const [chosen, setChosen] = useState<Channel | null>(null)
  const channels = options.data?.channels ?? []
  const channel = chosen && channels.includes(chosen) ? chosen : channels[0] ?? null
  const [order, setOrder] = useState<Order | null>(null)
  // On a phone the provider's own page pays (a QR code cannot be scanned by the phone showing it); it comes back
  // to the task's page, or to the account page where the order and what it granted are listed.
  const onPhone = useIsPhone()
  const [returnUrl, setReturnUrl] = useState('/order/account')
  const [placing, place] = useSubmit(async (request: OrderRequest) => {
    if (!channel) return
    const back = request.kind === 'task' ? window.location.pathname + window.location.search : '/order/account'
    setReturnUrl(back)
    setOrder(await createOrder({ ...request, channel, ...(onPhone ? { scene: 'phone' as const, returnUrl: back } : {}) }))
  })
  const notice = options.data?.unavailable ? (
    <Alert className="mb" type="info" showIcon title="在线支付未开通" description={options.data.unavailable} data-testid="payment-unavailable" />
  ) : options.data?.sandbox ? (
    <Alert className="mb" type="warning" showIcon title="支付沙箱已开启：支付为模拟操作，不会产生真实扣款" />
  ) : null
  const picker =
    channels.length > 0 ? (
      <Radio.Group value={channel} onChange={(e) => setChosen(e.target.value as Channel)} optionType="button" buttonStyle="solid" data-testid="channel-picker">
        {channels.map((c) => (
          <Radio.Button key={c} value={c}>
            {channelLabels[c]}
          </Radio.Button>
        ))}
      </Radio.Group>
    ) : null
  const dialog = <PayOrderModal key={order?.id ?? 0} order={order} onPhone={onPhone} returnUrl={returnUrl} onClose={() => setOrder(null)} onPaid={onPaid} />
  return { options, channel, notice, picker, dialog, placing, place }
}
