import { Button, Card, Segmented } from 'antd'
import { useNavigate, useSearchParams } from 'react-router'
import PasteRewritePage from '../rewrite/PasteRewritePage'
import RewriteRecordsPage from '../rewrite/RewriteRecordsPage'
import ChatPanel from './ChatPanel'
import ChatRecords from './ChatRecords'

function useTab(): ['measured' | 'chat', (tab: 'measured' | 'chat') => void] {
  const [params, setParams] = useSearchParams()
  const tab = params.get('tab') === 'chat' || params.get('chat') ? 'chat' : 'measured'
  return [tab, (next) => setParams(next === 'chat' ? { tab: 'chat' } : {})]
}

function TabSwitch({ labels }: { labels: [string, string] }) {
  const [tab, setTab] = useTab()
  return (
    <div className="page-card page-tabs">
      <Segmented
        value={tab}
        onChange={(v) => setTab(v as 'measured' | 'chat')}
        options={[
          { value: 'measured', label: labels[0] },
          { value: 'chat', label: labels[1] },
        ]}
        data-testid="smart-tabs"
      />
    </div>
  )
}

/** /nlp/machine: 智能改写 by mode (measured like every rewrite) or 对话改写 (a conversation that streams). */
export default function SmartRewriteHub() {
  const navigate = useNavigate()
  const [tab] = useTab()
  return (
    <>
      <TabSwitch labels={['按方式改写（逐段实测）', '对话改写']} />
      {tab === 'chat' ? (
        <div className="page-card">
          <Card title="对话改写" extra={<Button type="link" onClick={() => navigate('/machine/list?tab=chat')}>对话记录</Button>}>
            <ChatPanel />
          </Card>
        </div>
      ) : (
        <PasteRewritePage kind="smart" />
      )}
    </>
  )
}

/** /machine/list: smart rewrites and chat messages. */
export function SmartRecordsHub() {
  const [tab] = useTab()
  return (
    <>
      <TabSwitch labels={['智能改写记录', '对话记录']} />
      {tab === 'chat' ? <ChatRecords /> : <RewriteRecordsPage contentPath="/papermachine/content" newPath="/nlp/machine" paste="smart" />}
    </>
  )
}
