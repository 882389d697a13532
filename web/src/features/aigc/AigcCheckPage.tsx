import { useState } from 'react'
import { Alert, Button, Card, Form } from 'antd'
import { useNavigate, useSearchParams } from 'react-router'
import { aigcInit, aigcWordCount } from './api'
import PayModal from './PayModal'
import { useUserStore } from '../../stores/user'
import { useLoginDialogStore } from '../../stores/loginDialog'
import { useSubmit } from '../../utils/useSubmit'
import { usePaperInput } from '../../components/PaperInput'

/** /aigccheck/check: upload or paste a text, see its count, confirm the price, submit for AI-text detection. */
export default function AigcCheckPage() {
  const navigate = useNavigate()
  const token = useUserStore((s) => s.token)
  const openLogin = useLoginDialogStore((s) => s.open)
  const paper = usePaperInput(aigcWordCount, '将需要检测的正文粘贴到这里（不少于 200 字）')
  // A draft made elsewhere (a generated paper sent here: `?draft=ID`) goes straight to payment.
  const [params] = useSearchParams()
  const [draft, setDraft] = useState<number | null>(Number(params.get('draft')) || null)
  const [creating, create] = useSubmit(async () => {
    if (!token) {
      openLogin()
      return
    }
    setDraft((await aigcInit(paper.source)).id)
  })
  const tooShort = paper.count !== null && paper.count.chars < 200
  return (
    <div className="page-card">
      <Card title="AIGC检测" extra={<Button type="link" onClick={() => navigate('/aigccheck/list')}>检测记录</Button>}>
        <Alert
          type="info"
          showIcon
          className="mb"
          title="逐段估计文本由 AI 生成的概率"
          description="用本地语言模型衡量每段文字有多“可预测”、其内部表示与 ChatGPT、GPT-4.5、DeepSeek-R1 等模型写的文字有多接近，并经过校准给出概率与分级。结果是统计估计，不是定论：规范、简洁的人工写作也可能显得像机器生成，报告会写明模型、方法与局限。"
        />
        <Form layout="vertical">
          {paper.fields}
          {tooShort && <Alert className="mb" type="warning" showIcon title="文本不足 200 字：这么短的文本检测结果不可靠，请提交更长的文本。" data-testid="aigc-too-short" />}
          <Button type="primary" size="large" disabled={!paper.ready || Boolean(paper.countError) || tooShort} loading={creating} onClick={() => void create(undefined)} data-testid="aigc-next">
            {token ? '下一步：确认并支付' : '登录后提交检测'}
          </Button>
        </Form>
      </Card>
      <PayModal id={draft} onClose={() => setDraft(null)} onPaid={() => navigate('/aigccheck/list')} />
    </div>
  )
}
