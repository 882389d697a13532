import type { FormRule } from 'antd'
import { passwordProblem, validNewUsername } from '../../utils/validate'

/** A new account's name: the server's rule, checked before anything is sent. */
export const newUsernameRules: FormRule[] = [
  { required: true, whitespace: true, message: '请输入用户名' },
  {
    validator: (_, v: string) =>
      !v || validNewUsername(v) ? Promise.resolve() : Promise.reject(new Error('4–32 个字符，可使用英文字母、数字、汉字及 _ - . @')),
  },
]

/**
 * A new password (see `passwordProblem`); the user name is read from the form field `usernameField`,
 * or given as `username` where the form has none (password change).
 */
export function newPasswordRules({ usernameField, username }: { usernameField?: string; username?: string }): FormRule[] {
  return [
    { required: true, message: '请输入密码' },
    ({ getFieldValue }) => ({
      validator: (_, v: string) => {
        const name = usernameField ? ((getFieldValue(usernameField) as string | undefined) ?? '') : (username ?? '')
        const problem = v ? passwordProblem(v, name) : null
        return problem ? Promise.reject(new Error(problem)) : Promise.resolve()
      },
    }),
  ]
}

/** The repeated password must equal the field `passwordField`. */
export function confirmPasswordRules(passwordField = 'password'): FormRule[] {
  return [
    { required: true, message: '请再次输入密码' },
    ({ getFieldValue }) => ({
      validator: (_, v: string) =>
        !v || getFieldValue(passwordField) === v ? Promise.resolve() : Promise.reject(new Error('两次输入的密码不一致')),
    }),
  ]
}
